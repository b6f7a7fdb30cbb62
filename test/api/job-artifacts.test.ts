/**
 * The job artifacts API (issue 16, item 1): the archive by job and by ref, one file out of it,
 * keep, delete (a job's, a project's), expiry from expire_in in the query or as a multipart field,
 * the background job that removes expired archives, and the permissions of each.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';

/** A multipart upload with expire_in sent as a form field after the file, not in the query. */
function uploadWithField(t: TestApp, job: { id: number; token: string }, zip: Buffer, expireIn: string) {
  const boundary = '----kiln-field-test';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="artifacts.zip"\r\nContent-Type: application/zip\r\n\r\n`),
    zip,
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="expire_in"\r\n\r\n${expireIn}\r\n--${boundary}--\r\n`),
  ]);
  return t.request({
    method: 'POST', url: `/api/v4/jobs/${job.id}/artifacts?artifact_type=archive&artifact_format=zip`, payload: body,
    headers: { 'job-token': job.token, 'content-type': `multipart/form-data; boundary=${boundary}` },
  });
}

const FILES = {
  'out/report.txt': 'all good\n',
  'out/data.json': '{"ok":true}',
  'page.html': '<script>alert(1)</script>',
  'ünï code.txt': 'unicode name',
};

describe('job artifacts API', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  let zip: Buffer;
  const tokens: Record<string, string> = {};
  const users: Record<string, UserRow> = {};

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN, KILN_JOB_POLL_MS: '50' });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: make\n' });
    runner = await TestRunner.register(t);
    zip = await makeZip(FILES);
    for (const [role, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
      users[role] = await createUser(t.db);
      tokens[role] = await createToken(t.db, users[role]);
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: users[role].id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
  });
  after(async () => { await t.close(); });

  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string | undefined = p.ownerToken) =>
    t.request({ method, url: `/api/v4/projects/${p.project.id}${url}`, ...(token ? { token } : {}) });

  /** A pipeline whose build job uploads `content` and ends with `state`. */
  async function jobWithArtifacts(content: Buffer, o: { expireIn?: string; field?: boolean; state?: 'success' | 'failed' } = {}): Promise<JobPayload> {
    await createPipeline(t, p);
    const job = await runner.requestJob();
    const up = o.field ? await uploadWithField(t, job, content, o.expireIn!) : await runner.uploadArtifact(job, content, { expireIn: o.expireIn });
    assert.equal(up.statusCode, 201, up.body);
    return job;
  }

  it('serves the archive to readers and to a running job\'s token, and not to guests or strangers', async () => {
    const job = await jobWithArtifacts(zip);
    // While the job runs its token reads the archive (job_token and JOB-TOKEN).
    const byToken = await t.request({ url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts?job_token=${job.token}` });
    assert.equal(byToken.statusCode, 200, byToken.body);
    assert.deepEqual(byToken.rawPayload, zip);
    const byHeader = await t.request({ url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts`, headers: { 'job-token': job.token } });
    assert.equal(byHeader.statusCode, 200);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);

    const res = await api('GET', `/jobs/${job.id}/artifacts`, tokens.reporter);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="artifacts.zip"/);
    assert.equal(res.headers['content-length'], String(zip.length));
    assert.deepEqual(res.rawPayload, zip);
    assert.equal((await api('GET', `/jobs/${job.id}/artifacts`, tokens.guest)).statusCode, 403);
    const stranger = await api('GET', `/jobs/${job.id}/artifacts`, await createToken(t.db, await createUser(t.db)));
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
    assert.equal((await t.request({ url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts` })).statusCode, 404);
    // A finished job's token no longer authenticates.
    assert.equal((await t.request({ url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts?job_token=${job.token}` })).statusCode, 401);
    const none = await api('GET', '/jobs/999999/artifacts');
    assert.deepEqual([none.statusCode, none.json()], [404, { message: '404 Not found' }]);
  });

  it('streams one file out of the archive with its type; 404 for a missing one, 400 for a path that climbs', async () => {
    const job = await jobWithArtifacts(zip);
    await runner.update(job, 'success');
    const txt = await api('GET', `/jobs/${job.id}/artifacts/out/report.txt`, tokens.reporter);
    assert.equal(txt.statusCode, 200);
    assert.equal(txt.body, 'all good\n');
    assert.match(String(txt.headers['content-type']), /^text\/plain/);
    assert.match(String(txt.headers['content-disposition']), /^attachment; filename="report.txt"/);
    const json = await api('GET', `/jobs/${job.id}/artifacts/out/data.json`);
    assert.equal(json.headers['content-type'], 'application/json');
    assert.deepEqual(json.json(), { ok: true });
    // HTML never renders from kiln's origin: an attachment, not sniffed.
    const html = await api('GET', `/jobs/${job.id}/artifacts/page.html`);
    assert.match(String(html.headers['content-disposition']), /^attachment/);
    assert.equal(html.headers['x-content-type-options'], 'nosniff');
    const unicode = await api('GET', `/jobs/${job.id}/artifacts/${encodeURIComponent('ünï code.txt')}`);
    assert.equal(unicode.body, 'unicode name');
    assert.match(String(unicode.headers['content-disposition']), /filename\*=UTF-8''%C3%BCn%C3%AF%20code\.txt$/);
    for (const missing of ['out/nope.txt', 'out', 'out/']) {
      const r = await api('GET', `/jobs/${job.id}/artifacts/${missing}`);
      assert.equal(r.statusCode, 404, missing);
    }
    // Repeated slashes are squeezed before routing, as the Service's router does.
    assert.equal((await api('GET', `/jobs/${job.id}/artifacts//out/report.txt`)).body, 'all good\n');
    // (A literal `out/../x` is resolved by the client before it is sent.)
    for (const climbing of ['..%2F..%2Fetc%2Fpasswd', 'out%2F..%2Fout%2Freport.txt', 'out/..%5Creport.txt', 'out/report.txt%00']) {
      const r = await api('GET', `/jobs/${job.id}/artifacts/${climbing}`);
      assert.equal(r.statusCode, 400, climbing);
    }
    assert.equal((await api('GET', `/jobs/${job.id}/artifacts/out/report.txt`, tokens.guest)).statusCode, 403);
  });

  it('finds the named job of the ref\'s latest successful pipeline, for the archive and one file', async () => {
    const older = await jobWithArtifacts(await makeZip({ 'out/report.txt': 'older' }));
    await runner.update(older, 'success');
    const newest = await jobWithArtifacts(await makeZip({ 'out/report.txt': 'newest' }));
    await runner.update(newest, 'success');
    // A later pipeline that failed does not count.
    const failed = await jobWithArtifacts(await makeZip({ 'out/report.txt': 'failed' }));
    await runner.update(failed, 'failed', 'script_failure');
    const raw = await api('GET', '/jobs/artifacts/main/raw/out/report.txt?job=build', tokens.reporter);
    assert.equal(raw.statusCode, 200, raw.body);
    assert.equal(raw.body, 'newest');
    const download = await api('GET', '/jobs/artifacts/main/download?job=build');
    assert.equal(download.statusCode, 200);
    assert.match(String(download.headers['content-disposition']), /artifacts\.zip/);
    assert.deepEqual(download.rawPayload, await fs.promises.readFile(path.join(t.dataDir, 'ci', 'artifacts', String(p.project.id), String(newest.id), 'archive')));
    assert.equal((await api('GET', '/jobs/artifacts/main/download?job=nope')).statusCode, 404);
    assert.equal((await api('GET', '/jobs/artifacts/ma%00in/download?job=build')).statusCode, 404);
    assert.equal((await api('GET', `/jobs/artifacts/main/download?job=${'x'.repeat(2000)}`)).statusCode, 404);
    assert.equal((await api('GET', '/jobs/artifacts/other/download?job=build')).statusCode, 404);
    const missingJob = await api('GET', '/jobs/artifacts/main/download');
    assert.deepEqual([missingJob.statusCode, missingJob.json()], [400, { message: '400 Bad request - "job" not given' }]);
  });

  it('sets artifacts_expire_at from expire_in in the query or as a multipart field; keep clears it', async () => {
    const query = await jobWithArtifacts(zip, { expireIn: '2 days' });
    await runner.update(query, 'success');
    const queryJob = (await api('GET', `/jobs/${query.id}`)).json();
    const inTwoDays = Date.now() + 2 * 86_400_000;
    assert.ok(Math.abs(Date.parse(queryJob.artifacts_expire_at) - inTwoDays) < 60_000, queryJob.artifacts_expire_at);

    const field = await jobWithArtifacts(zip, { expireIn: '3 hours', field: true });
    await runner.update(field, 'success');
    const fieldJob = (await api('GET', `/jobs/${field.id}`)).json();
    assert.ok(Math.abs(Date.parse(fieldJob.artifacts_expire_at) - (Date.now() + 3 * 3_600_000)) < 60_000, fieldJob.artifacts_expire_at);

    const never = await jobWithArtifacts(zip, { expireIn: 'never', field: true });
    await runner.update(never, 'success');
    assert.equal((await api('GET', `/jobs/${never.id}`)).json().artifacts_expire_at, null);

    assert.equal((await api('POST', `/jobs/${field.id}/artifacts/keep`, tokens.reporter)).statusCode, 403);
    const kept = await api('POST', `/jobs/${field.id}/artifacts/keep`, tokens.developer);
    assert.equal(kept.statusCode, 200, kept.body);
    assert.equal(kept.json().id, field.id);
    assert.equal(kept.json().artifacts_expire_at, null);
    const row = await t.db.selectFrom('ci_job_artifacts').select('expire_at').where('job_id', '=', field.id).executeTakeFirstOrThrow();
    assert.equal(row.expire_at, null);
  });

  it('removes an expired archive in the background; a kept one stays', async () => {
    t.app.workers.start();
    const expiring = await jobWithArtifacts(zip, { expireIn: '1 second', field: true });
    await runner.update(expiring, 'success');
    const keeping = await jobWithArtifacts(zip, { expireIn: '1 second' });
    await runner.update(keeping, 'success');
    assert.equal((await api('POST', `/jobs/${keeping.id}/artifacts/keep`)).statusCode, 200);
    const file = path.join(t.dataDir, 'ci', 'artifacts', String(p.project.id), String(expiring.id), 'archive');
    assert.ok(fs.existsSync(file));
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && fs.existsSync(file)) await new Promise((r) => setTimeout(r, 100));
    assert.equal(fs.existsSync(file), false, 'the expired archive is removed');
    assert.equal((await t.db.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', expiring.id).execute()).length, 0);
    assert.equal((await api('GET', `/jobs/${expiring.id}/artifacts`)).statusCode, 404);
    const job = (await api('GET', `/jobs/${expiring.id}`)).json();
    assert.deepEqual(job.artifacts, [{ file_type: 'trace', size: job.artifacts[0]?.size ?? 0, filename: 'job.log', file_format: 'raw' }].filter(() => job.artifacts.length > 0));
    assert.equal(job.artifacts_file, undefined);
    assert.equal((await api('GET', `/jobs/${keeping.id}/artifacts`)).statusCode, 200);
  });

  it('serves a public project\'s artifacts to anyone while "Public pipelines" (public_builds) is on', async () => {
    const job = await jobWithArtifacts(zip);
    await runner.update(job, 'success');
    const anonymous = () => t.request({ url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts/out/report.txt` });
    const visible = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { visibility: 'public' } });
    assert.equal(visible.json().public_jobs, true);
    assert.equal((await anonymous()).statusCode, 200);
    const off = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { public_builds: false } });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().public_jobs, false);
    assert.deepEqual([(await anonymous()).statusCode, (await anonymous()).json()], [403, { message: '403 Forbidden' }]);
    assert.equal((await api('GET', `/jobs/${job.id}/artifacts/out/report.txt`, tokens.reporter)).statusCode, 200);
    await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { public_builds: true, visibility: 'private' } });
    assert.equal((await anonymous()).statusCode, 404);
  });

  it('deletes a job\'s artifacts (maintainers; the log stays), then a whole project\'s in the background', async () => {
    const job = await jobWithArtifacts(zip);
    await runner.appendTrace(job, 'log line\n');
    await runner.update(job, 'success');
    assert.equal((await api('DELETE', `/jobs/${job.id}/artifacts`, tokens.developer)).statusCode, 403);
    const del = await api('DELETE', `/jobs/${job.id}/artifacts`, tokens.maintainer);
    assert.equal(del.statusCode, 204);
    assert.equal((await api('GET', `/jobs/${job.id}/artifacts`)).statusCode, 404);
    assert.equal((await api('GET', `/jobs/${job.id}/trace`)).statusCode, 200);
    const after = (await api('GET', `/jobs/${job.id}`)).json();
    assert.equal(after.artifacts_file, undefined);
    assert.deepEqual(after.artifacts.map((a: { file_type: string }) => a.file_type), ['trace']);
    assert.equal(fs.existsSync(path.join(t.dataDir, 'ci', 'artifacts', String(p.project.id), String(job.id))), false);

    const other = await jobWithArtifacts(zip);
    await runner.update(other, 'success');
    assert.equal((await api('DELETE', '/artifacts', tokens.developer)).statusCode, 403);
    const all = await api('DELETE', '/artifacts', tokens.maintainer);
    assert.deepEqual([all.statusCode, all.json()], [202, { message: '202 Accepted' }]);
    t.app.workers.start();
    const deadline = Date.now() + 15_000;
    const left = () => t.db.selectFrom('ci_job_artifacts').select('id').where('project_id', '=', p.project.id).execute();
    while (Date.now() < deadline && (await left()).length > 0) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await left()).length, 0);
    assert.equal((await api('GET', `/jobs/${other.id}/artifacts`)).statusCode, 404);
  });
});
