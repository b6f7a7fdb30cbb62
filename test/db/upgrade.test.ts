/**
 * Safe upgrades (issue 34, item 3): an instance written by kiln as it was at the commit of
 * issue 20 (21e42fc; test/fixtures/upgrade-issue-20, made by its make.ts through that kiln's API:
 * a SQLite data directory, and a PostgreSQL dump with its data directory) is migrated to today's
 * schema on either engine, and then serves it all: the user's password and token, keys and
 * emails, groups, the project's repository with its branch and tag, the sealed CI/CD variable,
 * the pipeline with its job's log, the runner's and trigger's tokens, the snippet and the OAuth
 * application — and takes new writes (an issue, a new pipeline) on top.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPostgresDatabase, startTestApp, testDialect, type TestApp } from '../helpers/app.ts';

const OLD_ROOT_TOKEN = 'upgrade-root-token-0123456789';
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/upgrade-issue-20');

interface Values {
  userId: number; userToken: string; groupId: number; subgroupId: number; projectId: number; projectPath: string;
  triggerToken: string; runnerToken: string; jobId: number; log: string; snippetId: number; applicationId: string;
}

describe('upgrade from the kiln of issue 20', () => {
  let t: TestApp;
  let v: Values;
  let dataDir: string;
  let pgdb: Awaited<ReturnType<typeof createPostgresDatabase>> | null = null;

  before(async () => {
    const dialect = testDialect();
    v = JSON.parse(await fs.readFile(path.join(FIXTURE, 'values.json'), 'utf8'))[dialect];
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-upgrade-'));
    execFileSync('tar', ['-xzf', path.join(FIXTURE, `${dialect}.tar.gz`), '-C', dataDir]);
    const env: Record<string, string> = { KILN_DATA_DIR: dataDir, KILN_EXTERNAL_URL: 'http://127.0.0.1:3199' };
    if (dialect === 'postgres') {
      pgdb = await createPostgresDatabase();
      const client = new pg.Client({ connectionString: pgdb.url });
      await client.connect();
      await client.query(await fs.readFile(path.join(dataDir, 'dump.sql'), 'utf8'));
      await client.end();
      env.DATABASE_URL = pgdb.url;
    }
    // startTestApp migrates the old database to today's schema before it serves.
    t = await startTestApp(env);
  });
  after(async () => {
    await t.close();
    await pgdb?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const get = async (url: string, token = v.userToken) => {
    const res = await t.request({ method: 'GET', url: `/api/v4${url}`, token });
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res;
  };

  it('keeps users, their password, token, keys and emails', async () => {
    const me = (await get('/user')).json();
    assert.deepEqual([me.id, me.username, me.name], [v.userId, 'upgrader', 'Up Grader']);
    assert.deepEqual((await get('/user/keys')).json().map((k: { title: string }) => k.title), ['laptop']);
    assert.ok((await get('/user/emails')).json().some((e: { email: string }) => e.email === 'second@example.com'));
    const grant = await t.request({
      method: 'POST', url: '/oauth/token', payload: { grant_type: 'password', username: 'upgrader', password: 'upgrade-password-1234' },
    });
    assert.equal(grant.statusCode, 200, grant.body);
    const viaPassword = await t.request({ method: 'GET', url: '/api/v4/user', headers: { authorization: `Bearer ${grant.json().access_token}` } });
    assert.equal(viaPassword.json().username, 'upgrader');
  });

  it('keeps groups, the project and its repository', async () => {
    assert.equal((await get(`/groups/${v.subgroupId}`)).json().full_path, 'upgrade-group/sub');
    const project = (await get(`/projects/${v.projectId}`)).json();
    assert.equal(project.path_with_namespace, v.projectPath);
    assert.equal((await get(`/projects/${v.projectId}/repository/files/src%2Fapp.txt/raw?ref=main`)).body, 'app\n');
    const branches = (await get(`/projects/${v.projectId}/repository/branches`)).json().map((b: { name: string }) => b.name);
    assert.deepEqual(branches.sort(), ['feature', 'main']);
    assert.deepEqual((await get(`/projects/${v.projectId}/repository/tags`)).json().map((b: { name: string }) => b.name), ['v1.0.0']);
    const row = await t.db.selectFrom('projects').select('disk_path').where('id', '=', v.projectId).executeTakeFirstOrThrow();
    execFileSync('git', ['--git-dir', path.join(dataDir, 'repositories', row.disk_path), 'fsck', '--strict', '--no-progress'], { stdio: 'pipe' });
  });

  it('keeps CI: the sealed variable, the pipeline and its job log, the runner and the trigger', async () => {
    assert.equal((await get(`/projects/${v.projectId}/variables/DEPLOY_KEY`)).json().value, 'sealed-value-123');
    // The CI file's push ran; the branch and the tag made after it each left a pipeline pending.
    const pipelines = (await get(`/projects/${v.projectId}/pipelines?sort=asc`)).json();
    assert.deepEqual(pipelines.map((p: { status: string }) => p.status), ['success', 'pending', 'pending']);
    assert.equal((await get(`/projects/${v.projectId}/jobs/${v.jobId}/trace`)).body, v.log);
    const verify = await t.request({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: v.runnerToken } });
    assert.equal(verify.statusCode, 200, verify.body);
    const triggered = await t.request({
      method: 'POST', url: `/api/v4/projects/${v.projectId}/trigger/pipeline`, payload: { token: v.triggerToken, ref: 'main' },
    });
    assert.equal(triggered.statusCode, 201, triggered.body);
    assert.equal(triggered.json().source, 'trigger');
  });

  it('keeps the snippet and the OAuth application, and takes new writes', async () => {
    assert.equal((await get(`/snippets/${v.snippetId}/raw`)).body, '# kept\n');
    // Root of the old instance, with the token make.ts was given (the test's KILN_ROOT_TOKEN only seeds a first boot).
    const apps = (await t.request({ method: 'GET', url: '/api/v4/applications', token: OLD_ROOT_TOKEN })).json();
    assert.ok(apps.some((a: { application_id: string }) => a.application_id === v.applicationId));
    const issue = await t.request({ method: 'POST', url: `/api/v4/projects/${v.projectId}/issues`, token: v.userToken, payload: { title: 'After the upgrade' } });
    assert.equal(issue.statusCode, 201, issue.body);
    assert.equal(issue.json().iid, 1);
    const commit = await t.request({
      method: 'POST', url: `/api/v4/projects/${v.projectId}/repository/commits`, token: v.userToken,
      payload: { branch: 'feature', commit_message: 'More', actions: [{ action: 'create', file_path: 'more.txt', content: 'more\n' }] },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    // The push's pipeline is created after the write answers.
    let newest = '';
    for (let i = 0; i < 100 && newest !== commit.json().id; i += 1) {
      newest = (await get(`/projects/${v.projectId}/pipelines?ref=feature`)).json()[0]?.sha;
      if (newest !== commit.json().id) await new Promise((r) => setTimeout(r, 30));
    }
    assert.equal(newest, commit.json().id);
  });
});
