/**
 * Backup and restore (issue 34, items 1 and 2): an instance with data of every kind is backed up
 * by `kiln backup create` while a load writes to it, and restored by `kiln backup restore` into a
 * fresh instance on this engine and on the other one (SQLite → PostgreSQL and back; the
 * PostgreSQL side only when TEST_DATABASE_URL is set). The restored instances answer the API as
 * the original did, every repository passes `git fsck` and holds exactly the refs the backup
 * recorded, the database cut is consistent with them, and the old token and password still work.
 * Each refusal of a restore has its message and exit code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import tar from 'tar-stream';
import { createPostgresDatabase, ROOT_TOKEN, startTestApp, testDialect, type TestApp } from '../helpers/app.ts';
import { makeShards, waitFor, type Shards } from '../helpers/storage-shards.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { sshPublicKey } from '../helpers/keys.ts';
import { makeZip } from '../helpers/zip.ts';
import type { Manifest } from '../../src/backup/format.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';

const run = promisify(execFile);
const MAIN = path.resolve(import.meta.dirname, '../../src/main.ts');
const PASSWORD = 'keeper-password-1234';
const CI_CONFIG = 'build:\n  script: echo build\n  artifacts:\n    paths: [out.txt]\n';

interface Cli { code: number; stdout: string; stderr: string }

/** `kiln backup …` as an operator runs it: its own process, configured by the environment. */
async function kiln(args: string[], env: Record<string, string>): Promise<Cli> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, 'backup', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', KILN_SSH_PORT: '0', ...env }, maxBuffer: 1 << 24,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const hasPostgres = process.env.TEST_DATABASE_URL !== undefined || testDialect() === 'postgres';

interface Target { dir: string; env: Record<string, string>; drop: () => Promise<void> }

/** An empty data directory (with two storages) and an empty database of `engine`. */
async function emptyTarget(engine: 'sqlite' | 'postgres'): Promise<Target> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-restored-'));
  const data = path.join(dir, 'data');
  const pgdb = engine === 'postgres' ? await createPostgresDatabase() : null;
  return {
    dir: data,
    env: {
      KILN_DATA_DIR: data, KILN_STORAGES: `default=${path.join(data, 'repositories')},other=${path.join(dir, 'other')}`,
      DATABASE_URL: pgdb?.url ?? '', KILN_EXTERNAL_URL: 'http://kiln.test',
    },
    drop: async () => {
      await pgdb?.drop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** Reads an archive's entries into memory (the test's archives are small). */
async function readArchive(file: string): Promise<Map<string, Buffer>> {
  const entries = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => { entries.set(header.name, Buffer.concat(chunks)); next(); });
  });
  const done = new Promise<void>((resolve, reject) => { extract.on('finish', () => resolve()); extract.on('error', reject); });
  extract.end(zlib.gunzipSync(await fs.readFile(file)));
  await done;
  return entries;
}

async function writeArchive(file: string, entries: Map<string, Buffer>): Promise<void> {
  const pack = tar.pack();
  for (const [name, content] of entries) pack.entry({ name }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  await fs.writeFile(file, zlib.gzipSync(Buffer.concat(chunks)));
}

function gitDirs(roots: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const items = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    if (items.some((i) => i.name === 'HEAD' && i.isFile()) && items.some((i) => i.name === 'objects')) found.push(dir);
    for (const i of items) if (i.isDirectory() && i.name !== 'objects' && i.name !== 'refs') await walk(path.join(dir, i.name));
  };
  return Promise.all(roots.map(walk)).then(() => found.sort());
}

function refsOf(gitDir: string): [string, string][] {
  return execFileSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(refname) %(objectname)'], { encoding: 'utf8' })
    .split('\n').filter(Boolean).map((l) => l.split(' ') as [string, string]);
}

/** A pending job's queued_duration is measured against now, so it differs from one look to the next. */
function withoutClockFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutClockFields);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'queued_duration').map(([k, x]) => [k, withoutClockFields(x)]));
}

describe('kiln backup create and restore', () => {
  let t: TestApp;
  let shards: Shards;
  let work: string;
  let archive: string;
  let manifest: Manifest;
  let sourceEnv: Record<string, string>;
  const v = {
    userId: 0, userToken: '', projectId: 0, forkId: 0, movedId: 0, loadId: 0, snippetId: 0, jobId: 0, pipelineId: 0, pendingPipelineId: 0,
    loadIssues: [] as number[], uploadPath: '',
  };
  let views: Record<string, unknown>;

  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object, app = t) => {
    const res = await app.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  };

  /** What the API shows of everything the load does not touch. */
  async function apiViews(app: TestApp): Promise<Record<string, unknown>> {
    const u = v.userToken;
    const p = `/projects/${v.projectId}`;
    const out: Record<string, unknown> = {};
    const userGets = [
      '/user', '/user/keys', p, `${p}/repository/branches`, `${p}/repository/tags`, `${p}/repository/commits?ref_name=main`,
      `${p}/repository/commits?ref_name=feature`, `${p}/wikis?with_content=1`, `/snippets/${v.snippetId}`, `${p}/pipelines`, `${p}/jobs`,
      `${p}/variables`, `${p}/issues`,
    ];
    for (const url of userGets) out[url] = (await api('GET', url, u, undefined, app)).json();
    for (const url of [`/snippets/${v.snippetId}/raw`, `${p}/jobs/${v.jobId}/trace`]) out[url] = (await api('GET', url, u, undefined, app)).body;
    const artifacts = await app.request({ method: 'GET', url: `/api/v4${p}/jobs/${v.jobId}/artifacts`, token: u });
    out.artifacts = artifacts.rawPayload.toString('base64');
    out.upload = (await app.request({ method: 'GET', url: v.uploadPath, token: u })).body;
    out.package = (await api('GET', `${p}/packages/generic/kept-pkg/1.0.0/kept.bin`, u, undefined, app)).rawPayload.toString('base64');
    out.packages = (await api('GET', `${p}/packages`, u, undefined, app)).json();
    const rootGets = [
      '/runners/all', '/applications', '/project_repository_storage_moves', `/projects/${v.movedId}`, `/users/${v.userId}`,
      `/projects/${v.forkId}`, `/projects/${v.forkId}/repository/branches`, `/projects/${v.forkId}/repository/commits`,
    ];
    for (const url of rootGets) {
      out[url] = (await api('GET', url, ROOT_TOKEN, undefined, app)).json();
    }
    return withoutClockFields(out) as Record<string, unknown>;
  }

  before(async () => {
    shards = await makeShards(['default', 'other']);
    t = await startTestApp({ KILN_STORAGES: shards.env, KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN, KILN_JOB_POLL_MS: '50' });
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-backup-test-'));
    archive = path.join(work, 'instance.tar.gz');
    sourceEnv = { KILN_DATA_DIR: t.dataDir, KILN_STORAGES: shards.env, DATABASE_URL: t.config.databaseUrl ?? '' };

    // A user with a password, an SSH key and a personal access token.
    const user = (await api('POST', '/users', ROOT_TOKEN, {
      username: 'keeper', name: 'Kee Per', email: 'keeper@example.com', password: PASSWORD, skip_confirmation: true,
    })).json();
    v.userId = user.id;
    v.userToken = (await api('POST', `/users/${user.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'kept', scopes: ['api'] })).json().token;
    await api('POST', '/user/keys', v.userToken, { title: 'laptop', key: sshPublicKey() });

    // A project with history, a second branch and a tag, CI, a wiki and an issue.
    const project = (await api('POST', '/projects', v.userToken, { name: 'kept', initialize_with_readme: true })).json();
    v.projectId = project.id;
    const p = `/projects/${v.projectId}`;
    await api('POST', `${p}/variables`, v.userToken, { key: 'DEPLOY_KEY', value: 'sealed-value-123' });
    await api('POST', `${p}/repository/commits`, v.userToken, {
      branch: 'main', commit_message: 'Add CI', actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI_CONFIG }],
    });
    await api('POST', `${p}/repository/branches`, v.userToken, { branch: 'feature', ref: 'main' });
    await api('POST', `${p}/repository/commits`, v.userToken, {
      branch: 'feature', commit_message: 'Feature work', actions: [{ action: 'create', file_path: 'feature.txt', content: 'feature\n' }],
    });
    await api('POST', `${p}/repository/tags`, v.userToken, { tag_name: 'v1.0.0', ref: 'main', message: 'First release' });
    await api('POST', `${p}/wikis`, v.userToken, { title: 'home', content: 'Welcome to the wiki' });
    await api('POST', `${p}/issues`, v.userToken, { title: 'Kept issue', description: 'It stays' });
    const boundary = '----kiln-backup-test';
    const uploaded = await t.request({
      method: 'POST', url: `/api/v4${p}/uploads`, token: v.userToken,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n`
        + `Content-Type: text/plain\r\n\r\nuploaded notes\r\n--${boundary}--\r\n`),
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    v.uploadPath = uploaded.json().full_path;
    const put = await t.request({
      method: 'PUT', url: `/api/v4${p}/packages/generic/kept-pkg/1.0.0/kept.bin`, token: v.userToken,
      headers: { 'content-type': 'application/octet-stream' }, payload: Buffer.from([0, 1, 2, 250, 251, 252]),
    });
    assert.equal(put.statusCode, 201, put.body);

    // The pipeline of the CI push, run by a runner: a log and artifacts.
    const pipeline = await waitFor('the CI pipeline', async () => {
      const list = (await api('GET', `${p}/pipelines?ref=main`, v.userToken)).json();
      return list.length > 0 ? list[list.length - 1] : undefined;
    });
    v.pipelineId = pipeline.id;
    const runner = await TestRunner.register(t, { description: 'kept runner' });
    const job = await runner.requestJob();
    v.jobId = job.id;
    assert.equal((await runner.appendTrace(job, 'Running build\nbuilt\n')).statusCode, 202);
    assert.equal((await runner.uploadArtifact(job, await makeZip({ 'out.txt': 'artifact\n' }))).statusCode, 201);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    await waitFor('the job to finish', async () => {
      const j = (await api('GET', `${p}/jobs/${job.id}`, v.userToken)).json();
      return j.status === 'success' ? j : undefined;
    });

    // Pipelines' persistent refs: the finished pipeline's went when it completed. One left behind
    // (its deletion refused while a storage move held the repository, say) is stale; a pipeline
    // still to run keeps its ref (written by hand here, as a job of it starting would).
    const keptRow = await t.db.selectFrom('projects').select(['repository_storage', 'disk_path']).where('id', '=', v.projectId)
      .executeTakeFirstOrThrow();
    const keptGitDir = repositoryPath(t.config.storages, keptRow.repository_storage, keptRow.disk_path);
    assert.deepEqual(refsOf(keptGitDir).filter(([ref]) => ref.startsWith('refs/pipelines/')), []);
    execFileSync('git', ['--git-dir', keptGitDir, 'update-ref', `refs/pipelines/${v.pipelineId}`, pipeline.sha]);
    const pending = (await api('POST', `${p}/pipeline?ref=main`, v.userToken)).json();
    v.pendingPipelineId = pending.id;
    execFileSync('git', ['--git-dir', keptGitDir, 'update-ref', `refs/pipelines/${pending.id}`, pending.sha]);

    // A fork (its repository borrows the source's objects), a snippet, an OAuth application.
    v.forkId = (await api('POST', `${p}/fork`, ROOT_TOKEN, { path: 'kept-fork', name: 'kept-fork' })).json().id;
    await waitFor('the fork', async () => {
      const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', v.forkId).executeTakeFirstOrThrow();
      return row.import_status === 'finished' ? row : undefined;
    });
    await api('POST', `/projects/${v.forkId}/repository/commits`, ROOT_TOKEN, {
      branch: 'main', commit_message: 'Fork work', actions: [{ action: 'create', file_path: 'fork.txt', content: 'fork\n' }],
    });
    v.snippetId = (await api('POST', '/snippets', v.userToken, {
      title: 'kept snippet', visibility: 'private', files: [{ file_path: 'snippet.txt', content: 'snippet content\n' }],
    })).json().id;
    await api('POST', '/applications', ROOT_TOKEN, { name: 'kept app', redirect_uri: 'https://app.example.com/callback', scopes: 'api' });

    // A project moved to the other storage, the move finished.
    v.movedId = (await api('POST', '/projects', ROOT_TOKEN, { name: 'moved', initialize_with_readme: true })).json().id;
    const move = (await api('POST', `/projects/${v.movedId}/repository_storage_moves`, ROOT_TOKEN, { destination_storage_name: 'other' })).json();
    await waitFor('the storage move', async () => {
      const m = (await api('GET', `/project_repository_storage_moves/${move.id}`, ROOT_TOKEN)).json();
      return m.state === 'finished' ? m : undefined;
    });

    v.loadId = (await api('POST', '/projects', ROOT_TOKEN, { name: 'load', initialize_with_readme: true })).json().id;
    await api('POST', `/projects/${v.loadId}/repository/commits`, ROOT_TOKEN, {
      branch: 'main', commit_message: 'CI', actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI_CONFIG }],
    });
    // Background work of the set-up (pipelines of pushes) settles before the views are taken.
    await new Promise((r) => setTimeout(r, 500));
    views = await apiViews(t);
    assert.equal(views.upload, 'uploaded notes');
    assert.equal(views[`${p}/jobs/${v.jobId}/trace`], 'Running build\nbuilt\n');
    assert.equal(views.package, Buffer.from([0, 1, 2, 250, 251, 252]).toString('base64'));

    // The backup runs while a load writes: issues, commits (with their pipelines) and branches.
    // It stops two rounds after the backup ended, so some of its writes come after the cut for sure.
    let stopAt = Infinity;
    const load = (async () => {
      for (let i = 1; v.loadIssues.length < stopAt; i += 1) {
        v.loadIssues.push((await api('POST', `/projects/${v.loadId}/issues`, ROOT_TOKEN, { title: `load ${i}` })).json().iid);
        await api('POST', `/projects/${v.loadId}/repository/commits`, ROOT_TOKEN, {
          branch: 'main', commit_message: `load ${i}`, actions: [{ action: 'create', file_path: `load-${i}.txt`, content: `${i}\n` }],
        });
        await api('POST', `/projects/${v.loadId}/repository/branches`, ROOT_TOKEN, { branch: `load-${i}`, ref: 'main' });
      }
    })();
    // …and it has written before the backup begins.
    await waitFor('the load', async () => (v.loadIssues.length >= 2 ? true : undefined));
    const created = await kiln(['create', '--output', archive], sourceEnv);
    stopAt = v.loadIssues.length + 2;
    await load;
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /backup written to/);
    manifest = JSON.parse((await readArchive(archive)).get('manifest.json')!.toString('utf8'));
  });

  after(async () => {
    await t?.close();
    await shards?.remove();
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  it('writes one archive with a manifest and the secrets apart', async () => {
    const entries = await readArchive(archive);
    assert.equal(manifest.format, 'kiln-backup');
    assert.equal(manifest.engine, t.dialect);
    assert.match(manifest.schemaVersion, /^\d{4}-\d{2}-\d{2}T\d{4}_/);
    assert.equal(manifest.tables.users, Number((await t.db.selectFrom('users').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));
    for (const [name, sum] of Object.entries(manifest.entries)) assert.equal(entries.get(name)?.length, sum.size, name);
    const kinds = new Set(manifest.repositories.map((r) => r.kind));
    for (const kind of ['project', 'wiki', 'snippet']) assert.ok(kinds.has(kind as never), kind);
    assert.ok(manifest.repositories.some((r) => r.storage === 'other'));
    assert.ok(Object.keys(manifest.entries).some((n) => n.startsWith('files/ci/')), 'job logs and artifacts are in the archive');
    const secrets = JSON.parse(await fs.readFile(`${archive}.secrets.json`, 'utf8'));
    assert.ok(secrets.files['keys/ci_variables.key']);
    for (const content of entries.values()) assert.ok(!content.includes(secrets.files['keys/ci_variables.key'].trim()), 'no key in the archive');
    assert.equal((await fs.stat(`${archive}.secrets.json`)).mode & 0o077, 0);
  });

  it('keeps the persistent refs of pipelines still to run and leaves stale ones out', () => {
    const kept = manifest.repositories.find((r) => r.kind === 'project' && r.id === v.projectId)!;
    assert.deepEqual(kept.refs.filter(([ref]) => ref.startsWith('refs/pipelines/')).map(([ref]) => ref),
      [`refs/pipelines/${v.pendingPipelineId}`]);
  });

  const engines: ('sqlite' | 'postgres')[] = hasPostgres ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const engine of engines) {
    it(`restores into an empty ${engine} instance that answers as the original did`, async () => {
      const target = await emptyTarget(engine);
      let restored: TestApp | null = null;
      try {
        const res = await kiln(['restore', archive], target.env);
        assert.equal(res.code, 0, res.stderr);
        restored = await startTestApp(target.env);
        assert.equal(restored.dialect, engine);
        assert.deepEqual(await apiViews(restored), views);

        // Tokens and passwords work as before.
        assert.equal((await api('GET', '/user', v.userToken, undefined, restored)).json().username, 'keeper');
        const grant = await restored.request({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'password', username: 'keeper', password: PASSWORD } });
        assert.equal(grant.statusCode, 200, grant.body);
        const basic = await restored.request({
          method: 'GET', url: '/api/v4/user', headers: { authorization: `Bearer ${grant.json().access_token}` },
        });
        assert.equal(basic.json().id, v.userId);
        assert.equal((await api('GET', `/projects/${v.projectId}/variables/DEPLOY_KEY`, v.userToken, undefined, restored)).json().value, 'sealed-value-123');

        // Every repository is whole and holds exactly the refs recorded at the cut.
        const roots = restored.config.storages.map((s) => s.path);
        const dirs = await gitDirs(roots);
        assert.equal(dirs.length, manifest.repositories.length);
        for (const entry of manifest.repositories) {
          const gitDir = path.join(restored.config.storages.find((s) => s.name === entry.storage)!.path, entry.diskPath);
          execFileSync('git', ['--git-dir', gitDir, 'fsck', '--strict', '--no-progress', '--no-dangling'], { stdio: 'pipe' });
          assert.deepEqual(refsOf(gitDir).sort(), [...entry.refs].sort(), entry.diskPath);
          await assert.rejects(fs.stat(path.join(gitDir, 'objects', 'info', 'alternates')));
        }

        // The database's cut: the load's issues up to some point, none missing before it; every
        // pipeline's commit is in its restored repository.
        const iids = (await restored.db.selectFrom('issues').select('iid').where('project_id', '=', v.loadId).orderBy('iid').execute()).map((r) => r.iid);
        assert.deepEqual(iids, iids.map((_, i) => i + 1));
        assert.ok(iids.length >= 2 && iids.length < v.loadIssues.length, `${iids.length} of ${v.loadIssues.length} load issues`);
        const pipelines = await restored.db.selectFrom('ci_pipelines').innerJoin('projects', 'projects.id', 'ci_pipelines.project_id')
          .select(['ci_pipelines.sha', 'projects.repository_storage', 'projects.disk_path']).execute();
        assert.ok(pipelines.length >= 2);
        for (const row of pipelines) {
          const gitDir = path.join(restored.config.storages.find((s) => s.name === row.repository_storage)!.path, row.disk_path);
          execFileSync('git', ['--git-dir', gitDir, 'cat-file', '-e', `${row.sha}^{commit}`]);
        }

        // And it takes new writes: ids continue after the restored ones.
        const issue = (await api('POST', `/projects/${v.projectId}/issues`, v.userToken, { title: 'After restore' }, restored)).json();
        assert.equal(issue.iid, 2);
        const maxId = Number((await restored.db.selectFrom('issues').select((e) => e.fn.max('id').as('m')).where('id', '<>', issue.id).executeTakeFirstOrThrow()).m);
        assert.ok(issue.id > maxId);
      } finally {
        await restored?.close();
        await target.drop();
      }
    });
  }

  describe('refusals', () => {
    let target: Target;
    before(async () => { target = await emptyTarget('sqlite'); });
    after(async () => { await target.drop(); });

    const refused = async (args: string[], code: number, message: RegExp) => {
      const res = await kiln(['restore', ...args], target.env);
      assert.equal(res.code, code, `${res.stdout}${res.stderr}`);
      assert.match(res.stderr, message);
      assert.deepEqual(await fs.readdir(target.dir).catch(() => []), [], 'a refused restore leaves the target alone');
    };

    it('refuses a data directory that is not empty', async () => {
      const full = await emptyTarget('sqlite');
      try {
        await fs.mkdir(full.dir, { recursive: true });
        await fs.writeFile(path.join(full.dir, 'something'), 'x');
        const res = await kiln(['restore', archive], full.env);
        assert.equal(res.code, 3);
        assert.match(res.stderr, /is not empty/);
      } finally {
        await full.drop();
      }
    });

    it('refuses a database that is not empty', { skip: !hasPostgres }, async () => {
      const full = await emptyTarget('postgres');
      try {
        const app = await startTestApp(full.env);
        await app.close();
        await fs.rm(full.dir, { recursive: true, force: true });
        const res = await kiln(['restore', archive], full.env);
        assert.equal(res.code, 3);
        assert.match(res.stderr, /already has \d+ tables/);
      } finally {
        await full.drop();
      }
    });

    it('refuses a backup with a newer schema than this kiln knows', async () => {
      const entries = await readArchive(archive);
      const m = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
      m.schemaVersion = '2099-01-01T0000_from_the_future';
      entries.set('manifest.json', Buffer.from(JSON.stringify(m)));
      const newer = path.join(work, 'newer.tar.gz');
      await writeArchive(newer, entries);
      await refused([newer, '--secrets', `${archive}.secrets.json`], 4, /newer than this kiln's/);
    });

    it('refuses a secrets file that is missing or not the backup\'s', async () => {
      const copy = path.join(work, 'copy.tar.gz');
      await fs.copyFile(archive, copy);
      await refused([copy], 5, /does not exist/);
      const secrets = JSON.parse(await fs.readFile(`${archive}.secrets.json`, 'utf8'));
      secrets.files['keys/ci_variables.key'] = `${'ab'.repeat(32)}\n`;
      const other = path.join(work, 'other.secrets.json');
      await fs.writeFile(other, JSON.stringify(secrets));
      await refused([archive, '--secrets', other], 5, /does not belong to this backup/);
    });

    it('refuses a damaged archive', async () => {
      const entries = await readArchive(archive);
      const name = [...entries.keys()].find((n) => n === 'database/users.jsonl')!;
      entries.set(name, Buffer.from(entries.get(name)!.toString('utf8').replace('keeper', 'kepeer')));
      const altered = path.join(work, 'altered.tar.gz');
      await writeArchive(altered, entries);
      await refused([altered, '--secrets', `${archive}.secrets.json`], 6, /database\/users\.jsonl does not match its checksum/);
      const truncated = path.join(work, 'truncated.tar.gz');
      const whole = await fs.readFile(archive);
      await fs.writeFile(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
      await refused([truncated, '--secrets', `${archive}.secrets.json`], 6, /damaged/);
    });

    it('answers usage errors with exit code 2', async () => {
      assert.equal((await kiln(['restore'], target.env)).code, 2);
      assert.equal((await kiln(['frobnicate'], target.env)).code, 2);
      const res = await kiln(['restore', path.join(work, 'absent.tar.gz')], target.env);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /does not exist/);
    });
  });
});
