/**
 * Restoring a backup written at an older schema (issue 34, items 1 and 3): the archive in
 * test/fixtures/backup-old-schema was made by `kiln backup create` of kiln as it was at commit
 * 5d29988, six migrations behind (its README says how). `kiln backup restore` of today's kiln
 * loads it into an empty data directory and an empty database of this test's engine, the
 * migrations that came after run on top, and the instance then answers with the old data: the
 * user's token and password, the group, the project's repository with the branch pushed with git,
 * its tag, issue and wiki, the sealed variable, the pipeline's log and artifact, the snippet, the
 * runner and the OAuth application; every repository passes `git fsck` and new writes go on.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import { createPostgresDatabase, startTestApp, testDialect, type TestApp } from '../helpers/app.ts';
import { knownMigrations } from '../../src/db/migrate.ts';
import { WIKI_DIR } from '../../src/domain/wikis/wiki-repository.ts';

const run = promisify(execFile);
const MAIN = path.resolve(import.meta.dirname, '../../src/main.ts');
const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/backup-old-schema');
const OLD_SCHEMA = '2026-11-29T1200_integrations';
const OLD_ROOT_TOKEN = 'restore-root-token-0123456789';

interface Values {
  userId: number; userToken: string; password: string; groupId: number; projectId: number; projectPath: string; issueIid: number;
  pushedSha: string; runnerId: number; jobId: number; log: string; snippetId: number; applicationId: string;
}

describe('restore of a backup written at an older schema', () => {
  let t: TestApp;
  let v: Values;
  let dir: string;
  let restoreOutput: string;
  let pgdb: Awaited<ReturnType<typeof createPostgresDatabase>> | null = null;

  before(async () => {
    v = JSON.parse(await fs.readFile(path.join(FIXTURE, 'values.json'), 'utf8'));
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-old-restore-'));
    const dataDir = path.join(dir, 'data');
    if (testDialect() === 'postgres') pgdb = await createPostgresDatabase();
    const env: Record<string, string> = {
      KILN_DATA_DIR: dataDir, KILN_EXTERNAL_URL: 'http://kiln.test', DATABASE_URL: pgdb?.url ?? '',
    };
    const restored = await run(process.execPath, [MAIN, 'backup', 'restore', path.join(FIXTURE, 'backup.tar.gz')], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', KILN_SSH_PORT: '0', ...env }, maxBuffer: 1 << 24,
    });
    restoreOutput = restored.stdout;
    t = await startTestApp(env);
  });
  after(async () => {
    await t?.close();
    await pgdb?.drop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const get = async (url: string, token = v.userToken) => {
    const res = await t.request({ method: 'GET', url: `/api/v4${url}`, token });
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res;
  };

  it('restores the old schema and runs the migrations that came after it', async () => {
    assert.match(restoreOutput, new RegExp(`schema ${OLD_SCHEMA}`));
    const known = await knownMigrations();
    assert.ok(known.indexOf(OLD_SCHEMA) >= 0 && known.indexOf(OLD_SCHEMA) < known.length - 1, 'the fixture is older than this kiln');
    const db = t.db as unknown as Kysely<any>;
    const applied = (await db.selectFrom('kysely_migration').select('name').orderBy('name').execute()).map((r: { name: string }) => r.name);
    assert.deepEqual(applied, known);
  });

  it('keeps the user: token, password, keys and emails', async () => {
    const me = (await get('/user')).json();
    assert.deepEqual([me.id, me.username], [v.userId, 'restorer']);
    assert.deepEqual((await get('/user/keys')).json().map((k: { title: string }) => k.title), ['laptop']);
    assert.ok((await get('/user/emails')).json().some((e: { email: string }) => e.email === 'restorer-second@example.com'));
    const grant = await t.request({
      method: 'POST', url: '/oauth/token', payload: { grant_type: 'password', username: 'restorer', password: v.password },
    });
    assert.equal(grant.statusCode, 200, grant.body);
    const viaPassword = await t.request({ method: 'GET', url: '/api/v4/user', headers: { authorization: `Bearer ${grant.json().access_token}` } });
    assert.equal(viaPassword.json().id, v.userId);
  });

  it('keeps the group, the project, its repository with the pushed branch, the issue and the wiki', async () => {
    assert.equal((await get(`/groups/${v.groupId}`)).json().full_path, 'restore-group');
    assert.equal((await get(`/projects/${v.projectId}`)).json().path_with_namespace, v.projectPath);
    const branches = (await get(`/projects/${v.projectId}/repository/branches`)).json();
    assert.deepEqual(branches.map((b: { name: string }) => b.name).sort(), ['main', 'pushed']);
    assert.equal(branches.find((b: { name: string }) => b.name === 'pushed').commit.id, v.pushedSha);
    assert.equal((await get(`/projects/${v.projectId}/repository/files/pushed.txt/raw?ref=pushed`)).body, 'pushed with git\n');
    assert.deepEqual((await get(`/projects/${v.projectId}/repository/tags`)).json().map((b: { name: string }) => b.name), ['v1.0.0']);
    assert.equal((await get(`/projects/${v.projectId}/issues/${v.issueIid}`)).json().title, 'Kept across the restore');
    assert.equal((await get(`/projects/${v.projectId}/wikis/home`)).json().content, 'Restored wiki');
  });

  it('keeps CI: the sealed variable, the job\'s log and artifact, the runner', async () => {
    assert.equal((await get(`/projects/${v.projectId}/variables/DEPLOY_KEY`)).json().value, 'sealed-value-456');
    const job = (await get(`/projects/${v.projectId}/jobs/${v.jobId}`)).json();
    assert.deepEqual([job.status, job.ref], ['success', 'main']);
    assert.equal((await get(`/projects/${v.projectId}/jobs/${v.jobId}/trace`)).body, v.log);
    const artifact = await get(`/projects/${v.projectId}/jobs/${v.jobId}/artifacts/out.txt`);
    assert.equal(artifact.body, 'artifact\n');
    const runners = (await get('/runners/all', OLD_ROOT_TOKEN)).json();
    assert.ok(runners.some((r: { id: number }) => r.id === v.runnerId));
  });

  it('keeps the snippet and the OAuth application', async () => {
    assert.equal((await get(`/snippets/${v.snippetId}/raw`)).body, '# kept\n');
    const apps = (await get('/applications', OLD_ROOT_TOKEN)).json();
    assert.ok(apps.some((a: { application_id: string }) => a.application_id === v.applicationId));
  });

  it('restores every repository whole', async () => {
    const rows = await t.db.selectFrom('projects').select(['repository_storage', 'disk_path']).execute();
    assert.ok(rows.length > 0);
    for (const row of rows) {
      const storage = t.config.storages.find((s) => s.name === row.repository_storage)!;
      for (const gitDir of [path.join(storage.path, row.disk_path), path.join(storage.path, row.disk_path, WIKI_DIR)]) {
        if (!await fs.stat(gitDir).then(() => true, () => false)) continue;
        execFileSync('git', ['--git-dir', gitDir, 'fsck', '--strict', '--no-progress', '--no-dangling'], { stdio: 'pipe' });
      }
    }
    const snippet = await t.db.selectFrom('snippets').select(['repository_storage', 'disk_path']).where('id', '=', v.snippetId)
      .executeTakeFirstOrThrow();
    const storage = t.config.storages.find((s) => s.name === snippet.repository_storage)!;
    execFileSync('git', ['--git-dir', path.join(storage.path, snippet.disk_path), 'fsck', '--strict', '--no-progress', '--no-dangling'], { stdio: 'pipe' });
  });

  it('takes new writes after the restored rows', async () => {
    const issue = await t.request({ method: 'POST', url: `/api/v4/projects/${v.projectId}/issues`, token: v.userToken, payload: { title: 'After the restore' } });
    assert.equal(issue.statusCode, 201, issue.body);
    assert.equal(issue.json().iid, v.issueIid + 1);
    const commit = await t.request({
      method: 'POST', url: `/api/v4/projects/${v.projectId}/repository/commits`, token: v.userToken,
      payload: { branch: 'pushed', commit_message: 'More', actions: [{ action: 'create', file_path: 'more.txt', content: 'more\n' }] },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    assert.equal(commit.json().parent_ids[0], v.pushedSha);
  });
});
