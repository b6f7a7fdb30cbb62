/**
 * More of the web interface in a real browser (issue 33): blame, the tree's last commits, a job's
 * artifacts browsed and a file of them shown, the profile's overview, emails and preferences,
 * sign-up, a broadcast banner on sign-in and sign-up, and one closed with its button (the cookie
 * the page's script sets keeps it away on the next page). Each page loads under the strict policy with nothing refused, passes
 * axe-core with no serious or critical violation and is saved as a screenshot. Skipped only when
 * /usr/bin/chromium is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import {
  assertAccessible, assertCleanConsole, CHROMIUM, hasChromium, launchBrowser, openPage, screenshot, signInAs, type TestBrowser,
} from '../helpers/browser.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';

describe('more of the web interface in a real browser', () => {
  if (!hasChromium()) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: TestBrowser;
  let p: CiProject;
  let jobId: number;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t, { name: 'browser-more', visibility: 'public' });
    await pushFiles(t, p, {
      'src/app.ts': '/* a comment\n   over lines */\nexport const a = 1;\n',
      '.gitlab-ci.yml': 'build:\n  script: make\n',
    }, { message: 'First <b>commit</b>' });
    await pushFiles(t, p, { 'src/app.ts': '/* a comment\n   over lines */\nexport const a = 2;\n' }, { message: 'Second commit' });
    await createPipeline(t, p);
    const runner = await TestRunner.register(t);
    const job = await runner.requestJob();
    jobId = job.id;
    assert.equal((await runner.uploadArtifact(job, await makeZip({ 'out/report.txt': 'all good\n', 'out/app.ts': 'const x = 1;\n' }))).statusCode, 201);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const visit = async (path: string, name: string) => {
    const page = await openPage(browser.context);
    const res = await page.goto(`${t.url}${path}`);
    assert.equal(res?.status(), 200, path);
    assertCleanConsole(page);
    await assertAccessible(page);
    await screenshot(page, name);
    return page;
  };

  it('shows sign-up while it is on', async () => {
    const page = await visit('/users/sign_up', 'sign-up');
    assert.ok(await page.isVisible('#new_user_username'));
    await page.close();
  });

  it('shows a broadcast banner on sign-in and sign-up, signed out, as on every page', async () => {
    const created = await t.request({
      method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN,
      payload: { message: 'Sign-in **maintenance**', color: '#7a1f1f', font: '#ffffff', dismissable: true },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = (created.json() as { id: number }).id;
    try {
      for (const [path, name] of [['/users/sign_in', 'sign-in-broadcast'], ['/users/sign_up', 'sign-up-broadcast']] as const) {
        const page = await visit(path, name);
        assert.ok(await page.isVisible(`#broadcast-message-${id}`), `the banner on ${path}`);
        // Shown only where the separate script ran: the policy let it load on these pages too.
        assert.ok(await page.isVisible(`#broadcast-message-${id} button.broadcast-dismiss`), path);
        await page.close();
      }
    } finally {
      await t.request({ method: 'DELETE', url: `/api/v4/broadcast_messages/${id}`, token: ROOT_TOKEN });
    }
  });

  it('shows blame, last commits and a job\'s artifacts', async () => {
    const blame = await visit(`/${p.fullPath}/-/blame/main/src/app.ts`, 'blame');
    assert.equal(await blame.locator('tr.blame-run').count(), 2);
    await blame.close();
    const tree = await visit(`/${p.fullPath}/-/tree/main/src`, 'tree-last-commits');
    assert.match((await tree.textContent('td.last-commit'))!, /Second commit/);
    await tree.close();
    const browse = await visit(`/${p.fullPath}/-/jobs/${jobId}/artifacts/browse/out`, 'artifacts-browse');
    assert.equal(await browse.locator('#artifacts tbody tr').count(), 2);
    await browse.close();
    const file = await visit(`/${p.fullPath}/-/jobs/${jobId}/artifacts/file/out/app.ts`, 'artifacts-file');
    assert.ok(await file.isVisible('code.hljs'));
    await file.close();
  });

  it('shows the profile pages and closes a broadcast banner for good', async () => {
    const created = await t.request({
      method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN,
      payload: { message: 'Maintenance **tonight**', color: '#1f3d7a', font: '#ffffff', dismissable: true },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = (created.json() as { id: number }).id;
    await signInAs(t, browser.context, t.url, p.owner);
    for (const [path, name] of [['/-/profile', 'profile'], ['/-/profile/emails', 'profile-emails'], ['/-/profile/preferences', 'profile-preferences']] as const) {
      const page = await visit(path, name);
      assert.ok(await page.isVisible(`#broadcast-message-${id}`), `the banner on ${path}`);
      await page.close();
    }
    const page = await visit('/explore/projects', 'broadcast-banner');
    // The close button is shown only where the separate script runs: the policy let it load.
    await page.click(`#broadcast-message-${id} button.broadcast-dismiss`);
    assert.equal(await page.locator(`#broadcast-message-${id}`).count(), 0);
    await page.reload();
    assert.equal(await page.locator(`#broadcast-message-${id}`).count(), 0, 'the cookie keeps it closed');
    assertCleanConsole(page);
    await page.close();
  });
});
