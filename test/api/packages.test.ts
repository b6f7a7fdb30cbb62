/**
 * Generic packages and the package registry (issue 31, item 6): upload and download round trips
 * (a large file streamed over real HTTP, its SHA-256 kept), names and versions checked as the
 * Service's Gitlab::Regex does, duplicate file names (allowed, the newest wins), hidden packages
 * (downloadable, not listed), the size limit, project and group lists with their filters, package
 * files, deletes, and who may do what: Reporters read private packages, Developers publish,
 * Maintainers delete, anyone reads a public project's; deploy tokens by their scopes and job
 * tokens by their job's user (headers and HTTP Basic).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { startListeningApp } from '../helpers/git.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('generic packages', () => {
  let t: TestApp & { baseUrl: string };
  let p: CiProject;
  let pub: CiProject;
  let reporterToken: string;
  let developerToken: string;
  let maintainerToken: string;
  let guestToken: string;
  let strangerToken: string;

  async function member(projectId: number, level: number): Promise<string> {
    const u = await createUser(t.db);
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ROOT_TOKEN, payload: { user_id: u.id, access_level: level },
    });
    assert.equal(res.statusCode, 201, res.body);
    return createToken(t.db, u, { scopes: ['api'] });
  }

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    pub = await createCiProject(t, { visibility: 'public' });
    reporterToken = await member(p.project.id, 20);
    developerToken = await member(p.project.id, 30);
    maintainerToken = await member(p.project.id, 40);
    guestToken = await member(p.project.id, 10);
    strangerToken = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
  });
  after(async () => {
    await t.close();
  });

  const genericUrl = (project: CiProject, name: string, version: string, file: string, query = '') =>
    `/api/v4/projects/${project.project.id}/packages/generic/${name}/${version}/${file}${query}`;

  async function upload(project: CiProject, name: string, version: string, file: string, body: string | Buffer, o: {
    token?: string; headers?: Record<string, string>; query?: string;
  } = {}) {
    return t.request({
      method: 'PUT', url: genericUrl(project, name, version, file, o.query), token: o.token,
      headers: { 'content-type': 'application/octet-stream', ...o.headers }, payload: body,
    });
  }

  it('uploads a file (201 Created) and downloads it back as an attachment', async () => {
    const res = await upload(p, 'hello-world', 'v1.0.0', 'hello.tar.gz', 'package content', { token: developerToken });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { message: '201 Created' });
    const down = await t.request({ method: 'GET', url: genericUrl(p, 'hello-world', 'v1.0.0', 'hello.tar.gz'), token: reporterToken });
    assert.equal(down.statusCode, 200, down.body);
    assert.equal(down.body, 'package content');
    assert.equal(down.headers['content-type'], 'application/octet-stream');
    assert.match(String(down.headers['content-disposition']), /^attachment; filename="hello.tar.gz"/);
    const row = await t.db.selectFrom('package_files').selectAll().where('file_name', '=', 'hello.tar.gz').executeTakeFirstOrThrow();
    assert.equal(row.file_sha256, crypto.createHash('sha256').update('package content').digest('hex'));
    assert.equal(row.file_md5, null);
    assert.equal(Number(row.size), 15);
    assert.equal(await fs.readFile(path.join(t.dataDir, row.file_path), 'utf8'), 'package content');
  });

  it('streams a large file both ways over HTTP and keeps its SHA-256', async () => {
    const chunk = crypto.randomBytes(1024 * 1024);
    const chunks = 24; // more than the JSON body limit: the body is never buffered whole
    const expected = crypto.createHash('sha256');
    for (let i = 0; i < chunks; i++) expected.update(chunk);
    const digest = expected.digest('hex');
    const body = Readable.from((function* () { for (let i = 0; i < chunks; i++) yield chunk; })());
    const res = await fetch(`${t.baseUrl}${genericUrl(p, 'big', '2.0.0', 'big.bin', '?select=package_file')}`, {
      method: 'PUT', headers: { 'private-token': developerToken, 'content-type': 'application/octet-stream' },
      body: Readable.toWeb(body) as ReadableStream, duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 200, await res.clone().text());
    const file = await res.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(file), ['id', 'package_id', 'created_at', 'file_name', 'size', 'file_md5', 'file_sha1', 'file_sha256']);
    assert.equal(file.size, chunks * chunk.length);
    assert.equal(file.file_sha256, digest);
    assert.equal(file.file_name, 'big.bin');
    const down = await fetch(`${t.baseUrl}${genericUrl(p, 'big', '2.0.0', 'big.bin')}`, { headers: { 'private-token': reporterToken } });
    assert.equal(down.status, 200);
    assert.equal(down.headers.get('content-length'), String(chunks * chunk.length));
    const got = crypto.createHash('sha256');
    for await (const part of Readable.fromWeb(down.body as never)) got.update(part as Buffer);
    assert.equal(got.digest('hex'), digest);
  });

  it('takes the body as the file whatever its type, or with none (curl --upload-file)', async () => {
    for (const [i, type] of [undefined, 'application/x-www-form-urlencoded', 'application/json', 'multipart/form-data; boundary=x'].entries()) {
      const headers: Record<string, string> = { 'private-token': developerToken, 'content-length': '7' };
      if (type) headers['content-type'] = type;
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${t.baseUrl}${genericUrl(p, 'typed', '1.0.0', `f${i}.txt`)}`, { method: 'PUT', headers }, (r) => {
          r.resume();
          r.on('end', () => resolve(r.statusCode!));
        });
        req.on('error', reject);
        req.end('a=b&c=d');
      });
      assert.equal(status, 201, String(type));
      const down = await t.request({ method: 'GET', url: genericUrl(p, 'typed', '1.0.0', `f${i}.txt`), token: reporterToken });
      assert.equal(down.body, 'a=b&c=d');
    }
  });

  it("checks names, versions and file names as the Service's patterns do", async () => {
    for (const [name, version, file, error] of [
      ['bad name', '1.0.0', 'f.txt', 'package_name is invalid'],
      ['ok', '1..0', 'f.txt', null],
      ['ok', '...', 'f.txt', 'package_version is invalid'],
      ['ok', '1.0/2', 'f.txt', 'package_version is invalid'],
      ['ok', '1.0.0', 'f%20.txt', 'file_name is invalid'],
    ] as const) {
      const res = await upload(p, name.replace(' ', '%20'), version, file, 'x', { token: developerToken });
      if (error === null) assert.equal(res.statusCode, 201, res.body);
      else assert.deepEqual([res.statusCode, res.json()], [400, { error }], `${name} ${version} ${file}`);
    }
    const longVersion = 'a.'.repeat(20000) + '!';
    const res = await upload(p, 'ok', longVersion, 'f.txt', 'x', { token: developerToken });
    assert.equal(res.statusCode, 400);
  });

  it('keeps duplicate file names in a package and downloads the newest', async () => {
    for (const content of ['first', 'second']) {
      const res = await upload(p, 'dup', '1.0.0', 'same.txt', content, { token: developerToken });
      assert.equal(res.statusCode, 201, res.body);
    }
    const down = await t.request({ method: 'GET', url: genericUrl(p, 'dup', '1.0.0', 'same.txt'), token: developerToken });
    assert.equal(down.body, 'second');
    const pkgs = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?package_name=dup`, token: reporterToken })).json();
    assert.equal(pkgs.length, 1);
    const files = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages/${pkgs[0].id}/package_files`, token: reporterToken });
    assert.deepEqual(files.json().map((f: { file_name: string; size: number }) => [f.file_name, f.size]), [['same.txt', 5], ['same.txt', 6]]);
    const count = await t.db.selectFrom('packages').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', p.project.id).where('name', '=', 'dup').executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('hides a hidden package from lists but still serves its files', async () => {
    const res = await upload(p, 'secret-pkg', '1.0.0', 'a.txt', 'hidden content', { token: developerToken, query: '?status=hidden' });
    assert.equal(res.statusCode, 201, res.body);
    const list = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages`, token: reporterToken })).json();
    assert.ok(!list.some((x: { name: string }) => x.name === 'secret-pkg'));
    const hidden = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?status=hidden`, token: reporterToken })).json();
    assert.deepEqual(hidden.map((x: { name: string; status: string }) => [x.name, x.status]), [['secret-pkg', 'hidden']]);
    const down = await t.request({ method: 'GET', url: genericUrl(p, 'secret-pkg', '1.0.0', 'a.txt'), token: reporterToken });
    assert.equal(down.body, 'hidden content');
    const bad = await upload(p, 'secret-pkg', '1.0.0', 'a.txt', 'x', { token: developerToken, query: '?status=processing' });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'status does not have a valid value' }]);
    // A later upload with status=default shows it again.
    assert.equal((await upload(p, 'secret-pkg', '1.0.0', 'b.txt', 'x', { token: developerToken, query: '?status=default' })).statusCode, 201);
    const again = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?package_name=secret`, token: reporterToken })).json();
    assert.deepEqual(again.map((x: { status: string }) => x.status), ['default']);
  });

  it('answers 404 Not found for a missing package or file', async () => {
    for (const url of [genericUrl(p, 'nope', '1.0.0', 'a.txt'), genericUrl(p, 'hello-world', 'v1.0.0', 'other.txt')]) {
      const res = await t.request({ method: 'GET', url, token: reporterToken });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    }
  });

  it('gives reading to Reporters, publishing to Developers and deleting to Maintainers', async () => {
    const url = genericUrl(p, 'hello-world', 'v1.0.0', 'hello.tar.gz');
    const guest = await t.request({ method: 'GET', url, token: guestToken });
    assert.deepEqual([guest.statusCode, guest.json()], [403, { message: '403 Forbidden' }]);
    const stranger = await t.request({ method: 'GET', url, token: strangerToken });
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
    const anonymous = await t.request({ method: 'GET', url });
    assert.equal(anonymous.statusCode, 404);
    const reporterPut = await upload(p, 'r', '1.0.0', 'a.txt', 'x', { token: reporterToken });
    assert.deepEqual([reporterPut.statusCode, reporterPut.json()], [403, { message: '403 Forbidden' }]);
    const anonymousPut = await upload(p, 'r', '1.0.0', 'a.txt', 'x');
    assert.deepEqual([anonymousPut.statusCode, anonymousPut.json()], [401, { message: '401 Unauthorized' }]);
    const list = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?package_name=hello-world`, token: developerToken })).json();
    assert.equal(list[0]._links.delete_api_path, undefined);
    const id = list[0].id;
    const devDelete = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/packages/${id}`, token: developerToken });
    assert.equal(devDelete.statusCode, 403);
    const asMaintainer = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages/${id}`, token: maintainerToken })).json();
    assert.equal(asMaintainer._links.delete_api_path, `${t.baseUrl}/api/v4/projects/${p.project.id}/packages/${id}`);
    assert.equal(asMaintainer._links.web_path, `/${p.fullPath}/-/packages/${id}`);
  });

  it('lets anyone read the packages of a public project', async () => {
    assert.equal((await upload(pub, 'open', '1.0.0', 'o.txt', 'open content', { token: pub.ownerToken })).statusCode, 201);
    const down = await t.request({ method: 'GET', url: genericUrl(pub, 'open', '1.0.0', 'o.txt') });
    assert.deepEqual([down.statusCode, down.body], [200, 'open content']);
    const list = await t.request({ method: 'GET', url: `/api/v4/projects/${pub.project.id}/packages` });
    assert.deepEqual(list.json().map((x: { name: string }) => x.name), ['open']);
    const put = await upload(pub, 'open', '1.0.0', 'o.txt', 'x', { token: strangerToken });
    assert.equal(put.statusCode, 403);
  });

  it('refuses every package action when the project turns packages off', async () => {
    const q = await createCiProject(t);
    const off = await t.request({ method: 'PUT', url: `/api/v4/projects/${q.project.id}`, token: q.ownerToken, payload: { packages_enabled: false } });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal((await upload(q, 'x', '1.0.0', 'a.txt', 'x', { token: q.ownerToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${q.project.id}/packages`, token: q.ownerToken })).statusCode, 403);
  });

  it('authenticates deploy tokens by their package scopes, in their header or HTTP Basic', async () => {
    const make = async (scopes: string[]) => {
      const res = await t.request({
        method: 'POST', url: `/api/v4/projects/${p.project.id}/deploy_tokens`, token: ROOT_TOKEN, payload: { name: `dt-${scopes.join('-')}`, scopes },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { token: string; username: string };
    };
    const reader = await make(['read_package_registry']);
    const writer = await make(['write_package_registry']);
    const repoOnly = await make(['read_repository']);
    const basic = (u: string, pw: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}` });

    const w = await upload(p, 'deployed', '1.0.0', 'd.txt', 'by deploy token', { headers: { 'deploy-token': writer.token } });
    assert.equal(w.statusCode, 201, w.body);
    const wb = await upload(p, 'deployed', '1.0.0', 'e.txt', 'by basic', { headers: basic(writer.username, writer.token) });
    assert.equal(wb.statusCode, 201, wb.body);
    const pkg = await t.db.selectFrom('packages').selectAll().where('name', '=', 'deployed').executeTakeFirstOrThrow();
    assert.equal(pkg.creator_id, null);

    const r = await t.request({ method: 'GET', url: genericUrl(p, 'deployed', '1.0.0', 'd.txt'), headers: { 'deploy-token': reader.token } });
    assert.deepEqual([r.statusCode, r.body], [200, 'by deploy token']);
    const rb = await t.request({ method: 'GET', url: genericUrl(p, 'deployed', '1.0.0', 'e.txt'), headers: basic('anyone', reader.token) });
    assert.deepEqual([rb.statusCode, rb.body], [200, 'by basic']);
    const readerPut = await upload(p, 'deployed', '1.0.0', 'f.txt', 'x', { headers: { 'deploy-token': reader.token } });
    assert.equal(readerPut.statusCode, 403);
    // Without a package scope the token is nobody: a private project stays hidden.
    const none = await t.request({ method: 'GET', url: genericUrl(p, 'deployed', '1.0.0', 'd.txt'), headers: { 'deploy-token': repoOnly.token } });
    assert.equal(none.statusCode, 404);
    // Another project's packages are out of its reach.
    const other = await t.request({ method: 'GET', url: genericUrl(pub, 'open', '1.0.0', 'o.txt'), headers: { 'deploy-token': reader.token } });
    assert.equal(other.statusCode, 200); // public: readable by anyone
    const otherPut = await upload(pub, 'open', '1.0.0', 'o.txt', 'x', { headers: { 'deploy-token': writer.token } });
    assert.equal(otherPut.statusCode, 403);
    // A revoked token authenticates nothing.
    const tokens = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/deploy_tokens`, token: ROOT_TOKEN })).json();
    const writerId = tokens.find((x: { name: string }) => x.name === 'dt-write_package_registry').id;
    await t.db.updateTable('deploy_tokens').set({ revoked: 1 }).where('id', '=', writerId).execute();
    const revoked = await upload(p, 'deployed', '1.0.0', 'g.txt', 'x', { headers: { 'deploy-token': writer.token } });
    assert.equal(revoked.statusCode, 401);
    const badBasic = await upload(p, 'deployed', '1.0.0', 'g.txt', 'x', { headers: basic('x', 'not-a-token') });
    assert.equal(badBasic.statusCode, 401);
  });

  it("authenticates a running job's token and records its pipeline", async () => {
    const ci = await createCiProject(t);
    await pushFiles(t, ci, { '.gitlab-ci.yml': 'build: {script: x}\n' });
    await createPipeline(t, ci);
    const runner = await TestRunner.register(t);
    const job = await runner.requestJob();
    const res = await upload(ci, 'from-ci', '1.0.0', 'ci.txt', 'built', { headers: { 'job-token': job.token } });
    assert.equal(res.statusCode, 201, res.body);
    const basicUp = await upload(ci, 'from-ci', '1.0.0', 'ci2.txt', 'built too', {
      headers: { authorization: `Basic ${Buffer.from(`gitlab-ci-token:${job.token}`).toString('base64')}` },
    });
    assert.equal(basicUp.statusCode, 201, basicUp.body);
    const down = await t.request({ method: 'GET', url: genericUrl(ci, 'from-ci', '1.0.0', 'ci.txt', `?job_token=${job.token}`) });
    assert.deepEqual([down.statusCode, down.body], [200, 'built']);
    const list = (await t.request({ method: 'GET', url: `/api/v4/projects/${ci.project.id}/packages`, token: ci.ownerToken })).json();
    const { pipeline_id: pipelineId } = await t.db.selectFrom('ci_builds').select('pipeline_id').where('id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal(list[0].pipeline.id, pipelineId);
    assert.equal(list[0].pipeline.user.id, ci.owner.id);
    assert.deepEqual(list[0].pipelines.map((x: { id: number }) => x.id), [pipelineId]);
    const files = (await t.request({ method: 'GET', url: `/api/v4/projects/${ci.project.id}/packages/${list[0].id}/package_files`, token: ci.ownerToken })).json();
    assert.equal(files[0].pipelines[0].id, pipelineId);
    const bad = await upload(ci, 'from-ci', '1.0.0', 'ci.txt', 'x', { headers: { 'job-token': 'not-a-job-token' } });
    assert.equal(bad.statusCode, 401);
  });

  it('refuses a file above generic_packages_max_file_size with 413 and keeps nothing', async () => {
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { generic_packages_max_file_size: 1000 } });
    assert.equal(set.statusCode, 200, set.body);
    const before = await fs.readdir(path.join(t.dataDir, 'packages', String(p.project.id)));
    const res = await upload(p, 'too-big', '1.0.0', 'big.bin', Buffer.alloc(1001), { token: developerToken });
    assert.deepEqual([res.statusCode, res.json()], [413, { message: '413 Request Entity Too Large' }]);
    // Without a Content-Length the stream is cut where it passes the limit.
    const streamed = await fetch(`${t.baseUrl}${genericUrl(p, 'too-big', '1.0.0', 'big.bin')}`, {
      method: 'PUT', headers: { 'private-token': developerToken },
      body: Readable.toWeb(Readable.from([Buffer.alloc(600), Buffer.alloc(600)])) as ReadableStream, duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 413);
    assert.deepEqual(await fs.readdir(path.join(t.dataDir, 'packages', String(p.project.id))), before);
    assert.equal(await t.db.selectFrom('packages').select('id').where('name', '=', 'too-big').executeTakeFirst(), undefined);
    const ok = await upload(p, 'small', '1.0.0', 's.bin', Buffer.alloc(1000), { token: developerToken });
    assert.equal(ok.statusCode, 201);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { generic_packages_max_file_size: 5368709120 } });
  });

  it('lists, shows and deletes packages and their files', async () => {
    for (const v of ['1.0.0', '1.1.0']) assert.equal((await upload(p, 'multi', v, 'm.txt', v, { token: developerToken })).statusCode, 201);
    const list = (await t.request({
      method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?package_name=multi&order_by=version&sort=desc`, token: reporterToken,
    })).json();
    assert.deepEqual(list.map((x: { version: string }) => x.version), ['1.1.0', '1.0.0']);
    assert.deepEqual(Object.keys(list[0]), ['id', 'name', 'version', 'package_type', 'status', '_links', 'created_at', 'tags']);
    const one = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages/${list[0].id}`, token: reporterToken })).json();
    assert.deepEqual(one.versions.map((v: { version: string }) => v.version), ['1.0.0']);
    const typed = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages?package_type=npm`, token: reporterToken })).json();
    assert.deepEqual(typed, []);

    const files = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages/${list[0].id}/package_files`, token: reporterToken })).json();
    const fileRow = await t.db.selectFrom('package_files').selectAll().where('id', '=', files[0].id).executeTakeFirstOrThrow();
    const delFile = await t.request({
      method: 'DELETE', url: `/api/v4/projects/${p.project.id}/packages/${list[0].id}/package_files/${files[0].id}`, token: maintainerToken,
    });
    assert.equal(delFile.statusCode, 204);
    await assert.rejects(fs.stat(path.join(t.dataDir, fileRow.file_path)));
    const missingFile = await t.request({
      method: 'DELETE', url: `/api/v4/projects/${p.project.id}/packages/${list[0].id}/package_files/${files[0].id}`, token: maintainerToken,
    });
    assert.deepEqual([missingFile.statusCode, missingFile.json()], [404, { message: '404 Not found' }]);

    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/packages/${list[1].id}`, token: maintainerToken });
    assert.equal(del.statusCode, 204);
    const gone = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/packages/${list[1].id}`, token: maintainerToken });
    assert.deepEqual([gone.statusCode, gone.json()], [404, { message: '404 Not found' }]);
    assert.equal(await t.db.selectFrom('package_files').select('id').where('package_id', '=', list[1].id).executeTakeFirst(), undefined);
  });

  it("lists a group's packages with their projects, subgroups' unless excluded", async () => {
    let res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Pkg Group', path: 'pkg-group' } });
    const groupId = res.json().id;
    res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Sub', path: 'sub', parent_id: groupId } });
    const subId = res.json().id;
    const ids: number[] = [];
    for (const [ns, name] of [[groupId, 'top'], [subId, 'below']] as const) {
      res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name, namespace_id: ns } });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
      const put = await t.request({
        method: 'PUT', url: `/api/v4/projects/${res.json().id}/packages/generic/${name}-pkg/1.0.0/f.txt`, token: ROOT_TOKEN,
        headers: { 'content-type': 'application/octet-stream' }, payload: name,
      });
      assert.equal(put.statusCode, 201, put.body);
    }
    const all = (await t.request({ method: 'GET', url: `/api/v4/groups/${groupId}/packages?order_by=project_path`, token: ROOT_TOKEN })).json();
    assert.deepEqual(all.map((x: { name: string; project_id: number; project_path: string }) => [x.name, x.project_id, x.project_path]), [
      ['below-pkg', ids[1], 'pkg-group/sub/below'], ['top-pkg', ids[0], 'pkg-group/top'],
    ]);
    assert.deepEqual(Object.keys(all[0]), ['id', 'name', 'version', 'package_type', 'status', '_links', 'created_at', 'project_id', 'project_path', 'tags']);
    const top = (await t.request({ method: 'GET', url: `/api/v4/groups/${groupId}/packages?exclude_subgroups=true`, token: ROOT_TOKEN })).json();
    assert.deepEqual(top.map((x: { name: string }) => x.name), ['top-pkg']);
    // A stranger sees the private group as missing.
    const stranger = await t.request({ method: 'GET', url: `/api/v4/groups/${groupId}/packages`, token: strangerToken });
    assert.equal(stranger.statusCode, 404);
  });
});
