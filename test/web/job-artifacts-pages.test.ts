/**
 * A job's artifacts in the browser (issue 33): the archive's directories listed from its central
 * directory, a file in a page and raw (never HTML the browser would run), the archive's download,
 * the job page's links, and who may see them — read_build and `artifacts:access`, everyone else
 * the same 404 page; entry names are text everywhere.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';
import { listArchiveDirectory } from '../../src/domain/jobs/artifact-archive.ts';

const XSS = '<img src=x onerror=alert(1)>';
const FILES: Record<string, string> = {
  'out/report.txt': 'all good\n',
  [`out/${XSS}.txt`]: 'bad name\n',
  'page.html': '<script>alert(1)</script>',
  'deep/er/still.ts': 'const x = 1;\n',
  'bin.dat': '\u0000\u0001\u0002',
};
const CI = [
  'open:', '  script: x', '  artifacts:', '    paths: [out]',
  'dev:', '  script: x', '  artifacts:', '    paths: [out]', '    access: developer',
  'bare:', '  script: x', '',
].join('\n');

describe('web interface: job artifacts', () => {
  let t: TestApp;
  let p: CiProject;
  let zip: Buffer;
  let owner: Browser;
  let reporter: Browser;
  let stranger: Browser;
  const jobs: Record<string, JobPayload> = {};
  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const jobUrl = (name: string) => `/${p.fullPath}/-/jobs/${jobs[name]!.id}`;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t, { name: 'artifact-pages', visibility: 'private' });
    owner = await signedInBrowser(t, p.owner);
    stranger = await signedInBrowser(t, await createUser(t.db));
    const member = await createUser(t.db);
    const added = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: member.id, access_level: 20 },
    });
    assert.equal(added.statusCode, 201, added.body);
    reporter = await signedInBrowser(t, member);
    await pushFiles(t, p, { '.gitlab-ci.yml': CI });
    await createPipeline(t, p);
    const runner = await TestRunner.register(t);
    zip = await makeZip(FILES);
    for (let i = 0; i < 3; i++) {
      const job = await runner.requestJob();
      jobs[job.job_info.name] = job;
      if (job.job_info.name !== 'bare') assert.equal((await runner.uploadArtifact(job, zip)).statusCode, 201);
      assert.equal((await runner.update(job, 'success')).statusCode, 200);
    }
  });
  after(async () => { await t.close(); });

  it('links the artifacts from the job page, to those who may read them', async () => {
    const page = await get(jobUrl('open'), reporter);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(`href="${jobUrl('open')}/artifacts/browse"`));
    assert.ok(page.body.includes(`href="${jobUrl('open')}/artifacts/download"`));
    const dev = await get(jobUrl('dev'), reporter);
    assert.equal(dev.statusCode, 200);
    assert.ok(!dev.body.includes('/artifacts/browse'), 'access: developer hides them from a reporter');
    assert.ok((await get(jobUrl('dev'), owner)).body.includes(`href="${jobUrl('dev')}/artifacts/browse"`));
    assert.ok(!(await get(jobUrl('bare'), owner)).body.includes('id="job-artifacts"'));
  });

  it('lists the archive\'s directories, names escaped, directories first', async () => {
    const root = await get(`${jobUrl('open')}/artifacts/browse`, reporter);
    assert.equal(root.statusCode, 200, root.body);
    const names = [...root.body.matchAll(/<td class="name"><a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(names, [
      [`${jobUrl('open')}/artifacts/browse/deep`, 'deep/'],
      [`${jobUrl('open')}/artifacts/browse/out`, 'out/'],
      [`${jobUrl('open')}/artifacts/file/bin.dat`, 'bin.dat'],
      [`${jobUrl('open')}/artifacts/file/page.html`, 'page.html'],
    ]);
    const out = await get(`${jobUrl('open')}/artifacts/browse/out`, reporter);
    assert.equal(out.statusCode, 200);
    assert.ok(out.body.includes('&lt;img src=x onerror=alert(1)&gt;.txt') && !out.body.includes('<img src=x'));
    assert.ok(out.body.includes(`/artifacts/file/out/${encodeURIComponent(`${XSS}.txt`)}"`));
    assert.match(out.body, /report\.txt<\/a><\/td>\n<td class="muted">File<\/td><td class="muted">9 bytes<\/td>/);
    const deep = await get(`${jobUrl('open')}/artifacts/browse/deep/er`, reporter);
    assert.ok(deep.body.includes('still.ts'));
    for (const missing of ['browse/nope', 'browse/out/report.txt', 'browse/..%2F..', 'browse/%2Fetc', 'nope', 'file', 'raw']) {
      assert.equal((await get(`${jobUrl('open')}/artifacts/${missing}`, reporter)).statusCode, 404, missing);
    }
    // Doubled slashes are squeezed, as the Service's router does.
    assert.equal((await get(`${jobUrl('open')}/artifacts/browse/deep//er`, reporter)).statusCode, 200);
  });

  it('shows a file in a page and raw, never as HTML the browser would run', async () => {
    const page = await get(`${jobUrl('open')}/artifacts/file/page.html`, reporter);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('&lt;<span class="hljs-name">script</span>&gt;'), 'highlighted as HTML, escaped');
    assert.ok(!page.body.includes('<script>alert'));
    assert.ok(page.body.includes(`href="${jobUrl('open')}/artifacts/raw/page.html" id="raw-link"`));
    const binary = await get(`${jobUrl('open')}/artifacts/file/bin.dat`, reporter);
    assert.match(binary.body, /id="binary"/);

    const raw = await get(`${jobUrl('open')}/artifacts/raw/page.html`, reporter);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, FILES['page.html']);
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    assert.equal(raw.headers['x-content-type-options'], 'nosniff');
    assert.equal(raw.headers['content-security-policy'], "default-src 'none'; sandbox");
    const rawBinary = await get(`${jobUrl('open')}/artifacts/raw/bin.dat`, reporter);
    assert.equal(rawBinary.headers['content-type'], 'application/octet-stream');
    assert.match(String(rawBinary.headers['content-disposition']), /^attachment; filename="bin.dat"/);
    const named = await get(`${jobUrl('open')}/artifacts/raw/out/${encodeURIComponent(`${XSS}.txt`)}`, reporter);
    assert.equal(named.body, 'bad name\n');
    for (const missing of ['file/nope.txt', 'raw/nope.txt', 'file/out', 'raw/../page.html']) {
      assert.equal((await get(`${jobUrl('open')}/artifacts/${missing}`, reporter)).statusCode, 404, missing);
    }
  });

  it('downloads the archive', async () => {
    const res = await get(`${jobUrl('open')}/artifacts/download`, reporter);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="artifacts.zip"/);
    assert.deepEqual(res.rawPayload, zip);
  });

  it('answers the same 404 page to whoever may not read them, and for a job without any', async () => {
    const noReturn = (body: string) => body.replace(/return_to=[^"]*/g, '');
    for (const [who, b] of [['stranger', stranger], ['anonymous', undefined]] as const) {
      for (const action of ['browse', 'download', 'file/out/report.txt', 'raw/out/report.txt']) {
        const res = await get(`${jobUrl('open')}/artifacts/${action}`, b);
        const missing = await get(`/nobody/nothing/-/jobs/1/artifacts/${action}`, b);
        assert.equal(res.statusCode, 404, `${who} ${action}`);
        assert.equal(noReturn(res.body), noReturn(missing.body), `${who} ${action}`);
      }
    }
    for (const action of ['browse', 'download', 'raw/out/report.txt']) {
      assert.equal((await get(`${jobUrl('dev')}/artifacts/${action}`, reporter)).statusCode, 404, `reporter dev ${action}`);
      assert.equal((await get(`${jobUrl('dev')}/artifacts/${action}`, owner)).statusCode, 200, `owner dev ${action}`);
    }
    assert.equal((await get(`${jobUrl('bare')}/artifacts/browse`, owner)).statusCode, 404);
    assert.equal((await get(`/${p.fullPath}/-/jobs/999999/artifacts/browse`, owner)).statusCode, 404);
  });

  it('bounds a listing in entries and in the entries it reads', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 30; i++) many[`d/f${String(i).padStart(2, '0')}.txt`] = 'x';
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-zip-')), 'a.zip');
    fs.writeFileSync(file, await makeZip(many));
    const cut = await listArchiveDirectory(file, 'd', 10, 1000);
    assert.equal(cut.entries.length, 10);
    assert.equal(cut.truncated, true);
    const scanned = await listArchiveDirectory(file, 'd', 100, 5);
    assert.equal(scanned.entries.length, 5);
    assert.equal(scanned.truncated, true);
    const all = await listArchiveDirectory(file, 'd', 100, 1000);
    assert.deepEqual([all.entries.length, all.truncated, all.exists], [30, false, true]);
    assert.equal((await listArchiveDirectory(file, 'e', 100, 1000)).exists, false);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
