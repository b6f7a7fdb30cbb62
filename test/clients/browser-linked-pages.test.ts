/**
 * The pages behind the links kiln hands out (issue 33: snippets, releases, wiki, environments,
 * members, a tag, a group by its web_url) in a real browser: each loads under the strict policy
 * with nothing refused and no script error, passes axe-core with no serious or critical
 * violation, and is saved as a screenshot under test/.screenshots/. Skipped only when
 * /usr/bin/chromium is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import {
  assertAccessible, assertCleanConsole, CHROMIUM, hasChromium, launchBrowser, openPage, screenshot, signInAs, type TestBrowser,
} from '../helpers/browser.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';

describe('linked pages in a real browser', () => {
  if (!hasChromium()) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: TestBrowser;
  let p: CiProject;
  const paths: [string, string][] = [];

  before(async () => {
    t = await startListeningApp();
    const owner = await createUser(t.db, { username: 'browser-links' });
    const token = await createToken(t.db, owner, { scopes: ['api'] });
    const api = async (url: string, payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
      assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
      return res.json() as Record<string, any>;
    };
    const group = await api('/groups', { name: 'Browser Group', path: 'browser-group', visibility: 'public' });
    p = await createCiProject(t, { owner, name: 'browser-links-project', visibility: 'public' });
    const sha = await pushFiles(t, p, { 'README.md': '# Links\n' }, { tag: 'v1.0' });
    const id = p.project.id;
    const release = await api(`/projects/${id}/releases`, {
      tag_name: 'v1.0', name: 'First release', description: '## Changes\n\n- one\n- two',
      assets: { links: [{ name: 'binary', url: 'https://downloads.example.com/app', filepath: '/bin/app' }] },
    });
    const snippet = await api(`/projects/${id}/snippets`, {
      title: 'A snippet', file_name: 'snip.rb', content: 'puts "hello"\n', visibility: 'public', description: 'What it does',
    });
    const personal = await api('/snippets', { title: 'Mine', file_name: 'mine.py', content: 'print(1)\n', visibility: 'public' });
    await api(`/projects/${id}/wikis`, { title: 'home', content: '# Welcome\n\nSee [the other page](other).' });
    await api(`/projects/${id}/wikis`, { title: 'other', content: 'Other text.' });
    const environment = await api(`/projects/${id}/environments`, { name: 'production', external_url: 'https://prod.example.com' });
    await api(`/projects/${id}/deployments`, { environment: 'production', sha, ref: 'main', tag: false, status: 'success' });
    await api(`/projects/${id}/repository/commits/${sha}/comments`, { note: 'Looks **good**' });
    const local = (url: string) => url.slice(t.config.externalUrl.length);
    paths.push(
      [local(release._links.self), 'release'], [`/${p.fullPath}/-/releases`, 'releases'],
      [local(snippet.web_url), 'project-snippet'], [`/${p.fullPath}/-/snippets`, 'project-snippets'],
      [local(personal.web_url), 'personal-snippet'],
      [`/${p.fullPath}/-/wikis/home`, 'wiki-home'], [`/${p.fullPath}/-/wikis/pages`, 'wiki-pages'],
      [`/${p.fullPath}/-/environments`, 'environments'], [`/${p.fullPath}/-/environments/${environment.id}`, 'environment'],
      [`/${p.fullPath}/-/project_members`, 'project-members'], [`/${p.fullPath}/-/tags/v1.0`, 'tag'],
      [`/${p.fullPath}/-/commit/${sha}`, 'commit-with-notes'],
      [local(group.web_url), 'group'], [`${local(group.web_url)}/-/group_members`, 'group-members'],
    );
    browser = await launchBrowser();
    await signInAs(t, browser.context, t.url, owner);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows each page accessibly, with nothing refused by the policy', async () => {
    for (const [path, name] of paths) {
      const page = await openPage(browser.context);
      const res = await page.goto(`${t.url}${path}`);
      assert.equal(res?.status(), 200, path);
      assertCleanConsole(page);
      await assertAccessible(page);
      await screenshot(page, name);
      await page.close();
    }
  });
});
