/**
 * `/<project>/download_export`, the web_url a finished export's status hands out
 * (web/routes/projects/download-export.ts): the archive for those who may administer the project,
 * the same 404 page as a missing project for everyone else, the sign-in page for a visitor, the
 * Service's "expired" words without a finished export, and the project_download_export rate limit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { waitFor } from '../helpers/storage-shards.ts';

describe('the export download page', () => {
  let t: TestApp;
  let p: CiProject;
  let other: CiProject;
  let owner: Browser;
  let developer: Browser;
  let stranger: Browser;
  let downloadUrl: string;

  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const settings = (payload: Record<string, unknown>) =>
    t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload });

  before(async () => {
    t = await startTestApp();
    await settings({ project_export_limit: 0, project_download_export_limit: 0 });
    p = await createCiProject(t, { visibility: 'public' });
    other = await createCiProject(t, { owner: p.owner, visibility: 'public' });
    await pushFiles(t, p, { 'README.md': '# Exported\n' });
    owner = await signedInBrowser(t, p.owner);
    const dev = await createUser(t.db);
    developer = await signedInBrowser(t, dev);
    stranger = await signedInBrowser(t, await createUser(t.db));
    const member = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: dev.id, access_level: 30 },
    });
    assert.equal(member.statusCode, 201, member.body);

    const started = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/export`, token: p.ownerToken });
    assert.equal(started.statusCode, 202, started.body);
    const status = await waitFor('the export', async () => {
      const s = (await t.request({ url: `/api/v4/projects/${p.project.id}/export`, token: p.ownerToken })).json();
      return s.export_status === 'finished' ? s : undefined;
    }, 30_000);
    assert.ok(status._links.web_url.startsWith(t.config.externalUrl));
    downloadUrl = status._links.web_url.slice(t.config.externalUrl.length);
    assert.equal(downloadUrl, `/${p.fullPath}/download_export`);
  });
  after(() => t.close());

  it('sends the archive the API sends to a maintainer of the project', async () => {
    const page = await get(downloadUrl, owner);
    assert.equal(page.statusCode, 200, page.body.slice(0, 300));
    assert.equal(page.headers['content-type'], 'application/octet-stream');
    assert.match(String(page.headers['content-disposition']),
      new RegExp(`^attachment; filename="\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}_${p.fullPath.replace('/', '_')}_export\\.tar\\.gz"`));
    const api = await t.request({ url: `/api/v4/projects/${p.project.id}/export/download`, token: p.ownerToken });
    assert.equal(api.statusCode, 200);
    assert.ok(page.rawPayload.equals(api.rawPayload), 'the page and the API send the same archive');
    assert.equal(page.rawPayload.subarray(0, 2).toString('hex'), '1f8b', 'a gzip archive');
  });

  it('is the 404 page for a developer and a stranger, and the sign-in page for a visitor', async () => {
    const missing = await get('/no-such/project/download_export', owner);
    assert.equal(missing.statusCode, 404);
    for (const b of [developer, stranger]) {
      const res = await get(downloadUrl, b);
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers['content-type'], missing.headers['content-type']);
      assert.ok(!res.body.includes('export'), 'nothing tells an export exists');
    }
    const visitor = await get(downloadUrl);
    assert.equal(visitor.statusCode, 302);
    assert.match(String(visitor.headers.location), /^\/users\/sign_in/);
  });

  it('says the link expired when the project has no finished export', async () => {
    const res = await get(`/${other.fullPath}/download_export`, owner);
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /Project export link has expired\. Please generate a new export from your project settings\./);
  });

  it('counts downloads with the API under project_download_export_limit', async () => {
    assert.equal((await settings({ project_download_export_limit: 1 })).statusCode, 200);
    try {
      assert.equal((await get(downloadUrl, owner)).statusCode, 200);
      const limited = await get(downloadUrl, owner);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '60');
      assert.match(limited.body, /requested too many times/);
      const api = await t.request({ url: `/api/v4/projects/${p.project.id}/export/download`, token: p.ownerToken });
      assert.equal(api.statusCode, 429, 'the page and the API share the limit');
    } finally {
      await settings({ project_download_export_limit: 0 });
    }
  });
});
