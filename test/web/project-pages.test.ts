/**
 * A project's pages at the HTTP boundary (issue 33): the overview (README through the API's
 * sanitising Markdown renderer, clone URLs, last commit and its pipeline, languages) and the
 * repository pages, with what readers without code access may not see left out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';

describe('web interface: project pages', () => {
  let t: TestApp;
  let p: CiProject;
  let owner: Browser;
  let sha: string;
  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'web-project', visibility: 'public' });
    owner = await signedInBrowser(t, p.owner);
    sha = await pushFiles(t, p, {
      'README.md': '# Hello <script>alert(1)</script>\n\n[x](javascript:alert(2)) <img src=x onerror=alert(3)>\n\n* item\n',
      'src/main.ts': 'export const answer: number = 42;\n',
      '.gitlab-ci.yml': 'test:\n  script: echo hi\n',
    }, { message: 'First <b>commit</b>\n\nbody' });
    await createPipeline(t, p);
  });
  after(async () => { await t.close(); });

  it('renders the overview: README sanitised, clone URLs, last commit with its pipeline, languages', async () => {
    const res = await get(`/${p.fullPath}`);
    assert.equal(res.statusCode, 200);
    const body = res.body;
    assert.match(body, /<h1>web-project<\/h1>/);
    assert.ok(body.includes(`value="${t.config.externalUrl}/${p.fullPath}.git"`), 'HTTP clone URL');
    assert.match(body, /<section id="readme">/);
    assert.match(body, /<h1[^>]*>.*Hello/);
    assert.doesNotMatch(body, /<script>alert|javascript:alert|onerror=/);
    assert.match(body, /First &lt;b&gt;commit&lt;\/b&gt;/);
    assert.ok(body.includes(`/-/commit/${sha}`));
    assert.match(body, /status-(pending|created|running)/);
    assert.match(body, /id="languages"/);
    assert.match(body, /TypeScript/);
    assert.match(body, /<script src="\/-\/assets\/copy-[0-9a-f]{16}\.js" defer><\/script>/);
    assert.match(body, /<nav class="sidebar" aria-label="Project">/);
  });

  it('leaves the code out for readers without download_code, and shows an empty repository as such', async () => {
    const updated = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { repository_access_level: 'private', merge_requests_access_level: 'private', builds_access_level: 'private' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const anonymous = await get(`/${p.fullPath}`);
    assert.equal(anonymous.statusCode, 200);
    assert.doesNotMatch(anonymous.body, /clone-http|id="readme"|id="last-commit"/);
    assert.match((await get(`/${p.fullPath}`, owner)).body, /id="readme"/);
    await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { repository_access_level: 'enabled' } });

    const empty = await createCiProject(t, { name: 'empty-project', visibility: 'public' });
    const res = await get(`/${empty.fullPath}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /id="empty-repository"/);
  });
});
