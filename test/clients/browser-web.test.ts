/**
 * The web interface in a real browser (issue 33): each page loads under its strict policy with
 * nothing refused and no script error, passes axe-core with no serious or critical violation, in
 * light and dark mode and on a phone-sized screen, and is saved as a screenshot under
 * test/.screenshots/. Skipped only when /usr/bin/chromium is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import {
  assertAccessible, assertCleanConsole, CHROMIUM, hasChromium, launchBrowser, openPage, screenshot, signInAs, type TestBrowser,
} from '../helpers/browser.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';

describe('web interface in a real browser', () => {
  if (!hasChromium()) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: TestBrowser;
  let p: CiProject;

  before(async () => {
    t = await startListeningApp();
    p = await createCiProject(t, { name: 'browser-project', visibility: 'public' });
    await pushFiles(t, p, {
      'README.md': '# Browser project\n\nSome **bold** text and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n',
      'src/app.ts': 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n',
      '.gitlab-ci.yml': 'test:\n  script: echo hi\n',
    });
    await createPipeline(t, p);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const visit = async (path: string, name: string, o: { status?: number } = {}) => {
    const page = await openPage(browser.context);
    const res = await page.goto(`${t.url}${path}`);
    assert.equal(res?.status(), o.status ?? 200, path);
    // The browser reports the error page's own status; nothing else may fail.
    if (o.status === 404) page.problems = page.problems.filter((m) => !m.includes('status of 404'));
    assertCleanConsole(page);
    await assertAccessible(page);
    await screenshot(page, name);
    return page;
  };

  it('shows the signed-out pages: home, explore, a project, the 404 page', async () => {
    for (const [path, name] of [['/', 'home-signed-out'], ['/explore/projects', 'explore-projects'], ['/explore/groups', 'explore-groups'],
      [`/${p.fullPath}`, 'project-overview']] as const) {
      const page = await visit(path, name);
      await page.close();
    }
    const missing = await visit('/no-such/thing', 'not-found', { status: 404 });
    assert.match((await missing.textContent('h1'))!, /Page Not Found/);
    await missing.close();
  });

  it('shows the signed-in pages with the user menu, and copies a clone URL with the page script', async () => {
    await signInAs(t, browser.context, t.url, p.owner);
    const home = await visit('/', 'home-signed-in');
    assert.equal((await home.textContent('#user-menu'))!.trim(), p.owner.username);
    assert.ok(await home.isVisible('#pipelines'));
    await home.close();
    const overview = await visit(`/${p.fullPath}`, 'project-overview-signed-in');
    // The copy button is shown only where the separate script runs: the policy let it load.
    assert.ok(await overview.isVisible('button[data-copy="clone-http"]'));
    await overview.close();
    for (const [path, name] of [[`/${p.fullPath}/-/tree/main`, 'tree'], [`/${p.fullPath}/-/blob/main/src/app.ts`, 'blob'],
      [`/${p.fullPath}/-/commits/main`, 'commits'], [`/${p.fullPath}/-/commit/main`, 'commit'], [`/${p.fullPath}/-/branches`, 'branches'],
      [`/${p.fullPath}/-/tags`, 'tags'], [`/${p.owner.username}`, 'user-profile']] as const) {
      const page = await visit(path, name);
      await page.close();
    }
  });

  it('is usable on a phone and in dark mode', async () => {
    const phone = await launchBrowser({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const page = await openPage(phone.context);
      await page.goto(`${t.url}/${p.fullPath}`);
      assertCleanConsole(page);
      await assertAccessible(page);
      const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
      assert.ok(width <= 390, `no sideways scrolling on a phone (page is ${width}px wide)`);
      await screenshot(page, 'project-overview-phone-dark');
    } finally {
      await phone.close();
    }
  });
});
