/**
 * Statistics and housekeeping (issue 32, item 7): statistics=true on project reads kept current
 * by the refresh job after pushes, fetch counts per day from real git fetches over HTTP,
 * /application/statistics with delimiters, and POST /projects/:id/housekeeping (a git gc job,
 * its 24-hour lease, and its refusal to run beside a storage move).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { cloneUrl, git, startListeningApp, tempDir } from '../helpers/git.ts';
import { withDelimiters } from '../../src/http/routes/admin/statistics.ts';
import { runHousekeeping, RepositoryBusy } from '../../src/domain/housekeeping/housekeeping.ts';
import { countLiveJobs } from '../../src/domain/background-jobs/background-jobs.queries.ts';

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('project statistics and housekeeping', () => {
  let t: TestApp & { baseUrl: string };
  let work: string;
  let projectId: number;
  let reporterToken: string;
  let guestToken: string;
  let maintainerToken: string;
  const rootAuth = { username: 'root', password: ROOT_TOKEN };

  before(async () => {
    t = await startListeningApp();
    work = await tempDir();
    const p = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'measured' } });
    assert.equal(p.statusCode, 201, p.body);
    projectId = p.json().id;
    const add = async (level: number) => {
      const u = await createUser(t.db);
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ROOT_TOKEN, payload: { user_id: u.id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
      return createToken(t.db, u, { scopes: ['api'] });
    };
    reporterToken = await add(20);
    guestToken = await add(10);
    maintainerToken = await add(40);
  });
  after(async () => {
    await t?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('refreshes statistics after a push and shows them with statistics=true to Reporters', async () => {
    const repo = path.join(work, 'push');
    await fs.mkdir(repo);
    await git(['init', '-q', '-b', 'main'], repo);
    for (let i = 0; i < 3; i += 1) {
      await fs.writeFile(path.join(repo, `f${i}.txt`), `content ${i}\n`);
      await git(['add', '.'], repo);
      await git(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', `c${i}`], repo);
    }
    const pushed = await git(['push', '-q', cloneUrl(t.baseUrl, 'root/measured', rootAuth), 'main'], repo);
    assert.equal(pushed.code, 0, pushed.stderr);

    await until(async () => {
      const r = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}?statistics=true`, token: ROOT_TOKEN });
      return r.json().statistics?.commit_count === 3;
    }, 'the statistics refresh');
    const one = (await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}?statistics=true`, token: reporterToken })).json();
    assert.deepEqual(Object.keys(one.statistics), [
      'commit_count', 'storage_size', 'repository_size', 'wiki_size', 'lfs_objects_size', 'job_artifacts_size',
      'pipeline_artifacts_size', 'packages_size', 'snippets_size', 'uploads_size',
    ]);
    assert.ok(one.statistics.repository_size > 0);
    assert.equal(one.statistics.storage_size, one.statistics.repository_size + one.statistics.job_artifacts_size + one.statistics.snippets_size);
    const keys = Object.keys(one);
    assert.equal(keys.indexOf('statistics'), keys.indexOf('auto_devops_enabled') - 1);

    // Without the flag, and for a Guest, no statistics.
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}`, token: reporterToken })).json().statistics, undefined);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}?statistics=true`, token: guestToken })).json().statistics, undefined);

    const list = (await t.request({ method: 'GET', url: '/api/v4/projects?statistics=true&membership=true', token: reporterToken })).json();
    assert.equal(list.find((x: { id: number }) => x.id === projectId).statistics.commit_count, 3);
    const plain = (await t.request({ method: 'GET', url: '/api/v4/projects', token: ROOT_TOKEN })).json();
    assert.equal(plain[0].statistics, undefined);
  });

  it('counts fetches over HTTP per day for Reporters', async () => {
    const before = (await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/statistics`, token: reporterToken })).json();
    const clone = await git(['clone', '-q', cloneUrl(t.baseUrl, 'root/measured', rootAuth), path.join(work, 'clone')], work);
    assert.equal(clone.code, 0, clone.stderr);
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/statistics`, token: reporterToken });
    assert.equal(res.statusCode, 200);
    const stats = res.json();
    assert.ok(stats.fetches.total > before.fetches.total);
    assert.equal(stats.fetches.days.length, 1);
    assert.equal(stats.fetches.days[0].date, new Date().toISOString().slice(0, 10));
    assert.equal(stats.fetches.days[0].count, stats.fetches.total);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/statistics`, token: guestToken })).statusCode, 403);
  });

  it('answers application statistics to administrators as delimited strings', async () => {
    assert.equal(withDelimiters(1234567), '1,234,567');
    assert.equal(withDelimiters(999), '999');
    const res = await t.request({ method: 'GET', url: '/api/v4/application/statistics', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), [
      'forks', 'issues', 'merge_requests', 'notes', 'snippets', 'ssh_keys', 'milestones', 'users', 'projects', 'groups', 'active_users',
    ]);
    assert.equal(body.projects, '1');
    assert.equal(body.users, String((await t.db.selectFrom('users').select('id').execute()).length));
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/application/statistics', token: reporterToken })).statusCode, 403);
  });

  it('runs housekeeping as a job once a day, for Maintainers', async () => {
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/housekeeping`, token: reporterToken })).statusCode, 403);
    const started = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/housekeeping`, token: maintainerToken });
    assert.equal(started.statusCode, 201, started.body);
    assert.equal(typeof started.json(), 'string');
    await until(async () => {
      const row = await t.db.selectFrom('project_housekeeping').selectAll().where('project_id', '=', projectId).executeTakeFirst();
      return row?.last_run_at != null;
    }, 'the housekeeping job');
    // git gc packed the loose objects of the push.
    const project = await t.db.selectFrom('projects').select(['disk_path', 'repository_storage']).where('id', '=', projectId).executeTakeFirstOrThrow();
    const packs = await fs.readdir(path.join(t.config.storages[0].path, `${project.disk_path}.git`, 'objects', 'pack')).catch(
      () => fs.readdir(path.join(t.config.storages[0].path, project.disk_path, 'objects', 'pack')),
    );
    assert.ok(packs.some((f) => f.endsWith('.pack')));

    const again = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/housekeeping`, token: maintainerToken });
    assert.equal(again.statusCode, 409);
    assert.deepEqual(again.json(), { message: 'Somebody already triggered housekeeping for this resource in the past 1440 minutes' });
    await until(async () => (await countLiveJobs(t.db, 'projects.housekeeping')) === 0, 'the housekeeping job to finish');
  });

  it('never runs beside a storage move: a read-only repository makes the job wait', async () => {
    await t.db.updateTable('projects').set({ read_only: 1 }).where('id', '=', projectId).execute();
    try {
      await assert.rejects(runHousekeeping(t.db, t.config.storages, projectId, new AbortController().signal), RepositoryBusy);
    } finally {
      await t.db.updateTable('projects').set({ read_only: 0 }).where('id', '=', projectId).execute();
    }
  });

  it('tells administrators where the repository is stored', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/storage`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['disk_path', 'project_id', 'repository_storage', 'created_at']);
    assert.equal(body.project_id, projectId);
    assert.equal(body.repository_storage, 'default');
    assert.ok(!body.disk_path.endsWith('.git'));
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/storage`, token: maintainerToken })).statusCode, 403);
  });
});
