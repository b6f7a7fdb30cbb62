/**
 * Several kiln instances on one database (README, Several instances; issue 34, item 4): two
 * `kiln serve` processes started separately, as on two machines (their own ports and URLs), on
 * one PostgreSQL database, one Redis, one data directory and the same storages, behind no proxy.
 *
 * - A client alternating between them sees every write at once: no wait, no retry between the
 *   write on one and the read on the other (http/plugins/read-your-writes.ts).
 * - A push through one starts a pipeline that the other shows, and a `kiln runner` asking the
 *   other runs it.
 * - Background jobs (web hook deliveries), the CI sweeper and pipeline schedules, which both
 *   processes run, act once: every delivery arrives once, a stuck job fails once, a due schedule
 *   makes one pipeline.
 * - A storage move whose process is killed (SIGKILL) mid-copy shows on the other, which takes the
 *   move over once the lease runs out and finishes it.
 *
 * PostgreSQL only: several machines cannot share an SQLite file (its locks do not hold on network
 * file systems); on one machine KILN_WORKERS serves from several processes on SQLite
 * (test/api/workers.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresDatabase, testDialect } from '../helpers/app.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { cloneUrl, freePort, git, tempDir } from '../helpers/git.ts';
import { fillRepository, makeShards, refs, waitFor, type Shards } from '../helpers/storage-shards.ts';
import { runnerCli, scratchHome, startRunner, type RunnerDaemon } from '../runner/helpers.ts';

const ROOT_TOKEN = 'instances-root-token-0001';
const REGISTRATION = 'instances-registration-token-0001';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MAIN = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');
/** Seconds a job may wait for a runner before the sweeper fails it (both processes alike; at least 60). */
const PENDING_TIMEOUT = 60;

const skip = testDialect() !== 'postgres' ? 'PostgreSQL only: several machines cannot share an SQLite file' : false;

interface Instance {
  name: string;
  base: string;
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

async function call(on: Instance, method: string, url: string, o: { token?: string | null; json?: unknown } = {}): Promise<Answer> {
  const token = o.token === undefined ? ROOT_TOKEN : o.token;
  const res = await fetch(`${on.base}/api/v4${url}`, {
    method,
    headers: { ...(token ? { 'private-token': token } : {}), ...(o.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: o.json === undefined ? undefined : JSON.stringify(o.json),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, body, text };
}

async function ok(on: Instance, method: string, url: string, o: { token?: string | null; json?: unknown } = {}): Promise<any> {
  const res = await call(on, method, url, o);
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} on ${on.name}: ${res.status} ${res.text}`);
  return res.body;
}

describe('two kiln instances on one database, one Redis and one data directory', { skip }, () => {
  let pg: { url: string; drop: () => Promise<void> };
  let dataDir: string;
  let shards: Shards;
  let database: Database;
  let a: Instance;
  let b: Instance;
  let receiver: http.Server;
  let receiverUrl: string;
  const deliveries: { event: string; body: any }[] = [];
  const scratch: string[] = [];
  let runner: RunnerDaemon | null = null;

  async function start(name: string): Promise<Instance> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', KILN_EXTERNAL_URL: base,
        DATABASE_URL: pg.url, KILN_REDIS_URL: REDIS_URL, KILN_DATA_DIR: dataDir, KILN_STORAGES: shards.env, KILN_SSH_PORT: '0',
        KILN_ROOT_TOKEN: ROOT_TOKEN, KILN_ROOT_PASSWORD: 'root-password-1234', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION,
        KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'warn',
        KILN_JOB_POLL_MS: '100', KILN_JOB_LEASE_SECONDS: '2', KILN_CI_SWEEP_INTERVAL: '1', KILN_PIPELINE_SCHEDULE_INTERVAL: '1',
        KILN_CI_PENDING_TIMEOUT: String(PENDING_TIMEOUT), KILN_STORAGE_MOVE_TEST_DELAY_MS: '3000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const instance = { name, base, child, exited, output: () => output };
    await waitFor(`instance ${name} to answer`, async () => {
      assert.equal(child.exitCode, null, `instance ${name} exited:\n${output}`);
      return (await fetch(`${base}/-/readiness`).then((r) => r.ok, () => false)) || undefined;
    }, 90_000);
    return instance;
  }

  async function stop(i: Instance | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!i || i.child.exitCode !== null || i.child.signalCode !== null) return;
    i.child.kill(signal);
    await i.exited;
  }

  before(async () => {
    pg = await createPostgresDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-instances-'));
    shards = await makeShards(['default', 'b']);
    // Started together on an empty database and data directory: one migrates and creates root,
    // the other waits for it; both end up with the same keys.
    [a, b] = await Promise.all([start('a'), start('b')]);
    database = openDatabase({ databaseUrl: pg.url, dataDir });
    receiver = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => { text += c.toString(); });
      req.on('end', () => {
        deliveries.push({ event: String(req.headers['x-gitlab-event'] ?? ''), body: JSON.parse(text) });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    await ok(a, 'PUT', '/application/settings', { json: { allow_local_requests_from_hooks_and_services: true } });
  });

  after(async () => {
    await runner?.stop();
    await Promise.all([stop(a), stop(b)]);
    await database?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await pg?.drop();
    await shards?.remove();
    await fs.rm(dataDir, { recursive: true, force: true });
    for (const dir of scratch) await fs.rm(dir, { recursive: true, force: true });
  });

  it('boots both on one empty database and data directory with one root and the same signing keys', async () => {
    const users = await ok(b, 'GET', '/users?username=root');
    assert.equal(users.length, 1);
    const [keysA, keysB] = await Promise.all([a, b].map((i) => fetch(`${i.base}/oauth/discovery/keys`).then((r) => r.json())));
    assert.deepEqual(keysA, keysB);
  });

  it('shows every write made through one instance on the next request to the other, at once', async () => {
    const pair = [a, b];
    for (let i = 0; i < 10; i++) {
      const [writer, reader] = i % 2 === 0 ? pair : [b, a];
      // Create, then read on the other.
      const created = await ok(writer, 'POST', '/projects', { json: { name: `alternating-${i}`, visibility: 'private', description: 'first' } });
      const read = await ok(reader, 'GET', `/projects/${created.id}`);
      assert.equal(read.description, 'first', `project ${i} read on ${reader.name}`);
      // The list the reader has just computed (and may remember), then an update, then the list again.
      const search = `/projects?search=alternating-${i}&simple=true`;
      assert.deepEqual((await ok(reader, 'GET', search)).map((p: { id: number }) => p.id), [created.id]);
      await ok(writer, 'PUT', `/projects/${created.id}`, { json: { description: `second ${i}` } });
      assert.equal((await ok(reader, 'GET', `/projects?search=alternating-${i}`))[0].description, `second ${i}`);
      assert.equal((await ok(reader, 'GET', `/projects/${created.id}`)).description, `second ${i}`);
      // A user's profile, remembered on the reader, changed through the writer.
      const name = `Name ${i}`;
      assert.equal((await ok(reader, 'GET', '/users/1', { token: null })).id, 1);
      await ok(writer, 'PUT', '/users/1', { json: { name } });
      assert.equal((await ok(reader, 'GET', '/users/1', { token: null })).name, name);
      // An issue opened through the writer, listed and then closed: the reader follows each step.
      const issue = await ok(writer, 'POST', `/projects/${created.id}/issues`, { json: { title: `issue ${i}` } });
      assert.deepEqual((await ok(reader, 'GET', `/projects/${created.id}/issues?state=opened`)).map((x: { iid: number }) => x.iid), [issue.iid]);
      await ok(writer, 'PUT', `/projects/${created.id}/issues/${issue.iid}`, { json: { state_event: 'close' } });
      assert.deepEqual(await ok(reader, 'GET', `/projects/${created.id}/issues?state=opened`), []);
    }
  });

  it('refuses a token on the other instance as soon as one revoked it', async () => {
    for (let i = 0; i < 6; i++) {
      const [revoker, other] = i % 2 === 0 ? [a, b] : [b, a];
      const { token, id } = await ok(revoker, 'POST', '/users/1/personal_access_tokens', { json: { name: `revoked-${i}`, scopes: ['api'] } });
      // Both remember the token now.
      for (const on of [a, b, a, b]) assert.equal((await call(on, 'GET', '/user', { token })).status, 200);
      if (i % 2 === 0) await ok(revoker, 'DELETE', `/personal_access_tokens/${id}`);
      else await ok(revoker, 'DELETE', '/personal_access_tokens/self', { token });
      const refused = await call(other, 'GET', '/user', { token });
      assert.equal(refused.status, 401, `token ${i} on ${other.name}: ${refused.text}`);
    }
  });

  it('runs on one instance, by a runner asking it, the pipeline of a push through the other', async () => {
    const project = await ok(a, 'POST', '/projects', { json: { name: 'pushed', visibility: 'private' } });
    const work = await tempDir('kiln-instances-push-');
    scratch.push(work);
    const run = async (args: string[]) => {
      const r = await git(args, work);
      assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    await run(['init', '--quiet', '--initial-branch=main']);
    await fs.writeFile(path.join(work, '.gitlab-ci.yml'), 'greet:\n  script:\n    - echo "hello from $CI_PROJECT_PATH"\n');
    await run(['add', '.']);
    await run(['commit', '--quiet', '-m', 'CI']);
    const sha = await run(['rev-parse', 'HEAD']);

    const home = await scratchHome();
    scratch.push(home);
    const config = path.join(home, 'config.toml');
    const registered = await runnerCli(home, ['register', '--url', b.base, '--registration-token', REGISTRATION, '--description', 'on b', '--config', config]);
    assert.equal(registered.code, 0, registered.stderr + registered.stdout);
    runner = startRunner(home, ['--config', config]);

    await run(['push', '--quiet', cloneUrl(a.base, project.path_with_namespace, { username: 'root', password: ROOT_TOKEN }), 'HEAD:refs/heads/main']);
    const pipeline = await waitFor('the push pipeline on b', async () => {
      const list = await ok(b, 'GET', `/projects/${project.id}/pipelines`);
      return list.find((p: { sha: string }) => p.sha === sha);
    }, 30_000);
    assert.equal(pipeline.source, 'push');
    const done = await waitFor('the pipeline to finish', async () => {
      const p = await ok(a, 'GET', `/projects/${project.id}/pipelines/${pipeline.id}`);
      return ['success', 'failed', 'canceled'].includes(p.status) ? p : undefined;
    }, 60_000);
    assert.equal(done.status, 'success', runner.log());
    const [job] = await ok(a, 'GET', `/projects/${project.id}/pipelines/${pipeline.id}/jobs`);
    assert.equal(job.runner.description, 'on b');
    const trace = await fetch(`${a.base}/api/v4/projects/${project.id}/jobs/${job.id}/trace`, { headers: { 'private-token': ROOT_TOKEN } });
    assert.match(await trace.text(), /hello from root\/pushed/);
  });

  it('runs background jobs, the CI sweeper and pipeline schedules once across both', async () => {
    const project = await ok(b, 'POST', '/projects', { json: { name: 'hooked', visibility: 'private', initialize_with_readme: true } });
    await ok(a, 'POST', `/projects/${project.id}/hooks`, {
      json: { url: receiverUrl, push_events: false, issues_events: true, job_events: true, pipeline_events: true },
    });
    // A job no runner takes (no runner has the tag): the sweepers of both fail it once it waited too long.
    await ok(b, 'POST', `/projects/${project.id}/repository/files/.gitlab-ci.yml`, {
      json: { branch: project.default_branch ?? 'main', content: 'stuck:\n  tags: [nobody-has-this]\n  script: [echo never]\n', commit_message: 'CI' },
    });
    // Deliveries are background jobs of both processes' workers: each issue's arrives once.
    const ISSUES = 12;
    for (let i = 0; i < ISSUES; i++) await ok(i % 2 === 0 ? a : b, 'POST', `/projects/${project.id}/issues`, { json: { title: `issue ${i}` } });

    // A schedule whose next run is due: both schedulers tick every second, one claims it.
    const schedule = await ok(a, 'POST', `/projects/${project.id}/pipeline_schedules`, {
      json: { description: 'nightly', ref: project.default_branch ?? 'main', cron: '0 3 * * *' },
    });
    await database.db.updateTable('ci_pipeline_schedules').set({ next_run_at: new Date(Date.now() - 60_000).toISOString() })
      .where('id', '=', schedule.id).execute();

    await waitFor('every issue delivery', async () => deliveries.filter((d) => d.event === 'Issue Hook').length >= ISSUES || undefined, 30_000);
    const scheduled = await waitFor('the scheduled pipeline', async () => {
      const list = await ok(a, 'GET', `/projects/${project.id}/pipelines?source=schedule`);
      return list.length > 0 ? list : undefined;
    }, 30_000);
    // Waiting a minute for it is pointless: it is made to look queued long ago instead.
    await waitFor('the pending jobs of both pipelines', async () => {
      const jobs = await ok(b, 'GET', `/projects/${project.id}/jobs?scope=pending`);
      return jobs.length === 2 || undefined;
    }, 30_000);
    await database.db.updateTable('ci_builds').set({ queued_at: new Date(Date.now() - 10 * PENDING_TIMEOUT * 1000).toISOString() })
      .where('project_id', '=', project.id).where('status', '=', 'pending').execute();

    await waitFor('the stuck jobs to fail', async () => {
      const jobs = await ok(b, 'GET', `/projects/${project.id}/jobs?per_page=100`);
      return jobs.length === 2 && jobs.every((j: { status: string }) => j.status === 'failed') || undefined;
    }, 30_000);
    // Long enough for a second delivery, a second tick or a second sweep to have happened.
    await sleep(4_000);

    const issueIids = deliveries.filter((d) => d.event === 'Issue Hook').map((d) => d.body.object_attributes.iid as number).sort((x, y) => x - y);
    assert.deepEqual(issueIids, Array.from({ length: ISSUES }, (_, i) => i + 1));
    assert.equal((await ok(b, 'GET', `/projects/${project.id}/pipelines?source=schedule`)).length, 1);
    assert.equal(scheduled.length, 1);
    const jobs = await ok(a, 'GET', `/projects/${project.id}/jobs?per_page=100`);
    assert.ok(jobs.every((j: { failure_reason: string }) => j.failure_reason === 'stuck_or_timeout_failure'), JSON.stringify(jobs));
    // Each job failed once: one failed Job Hook per job, one failed Pipeline Hook per pipeline.
    const failedJobHooks = deliveries.filter((d) => d.event === 'Job Hook' && d.body.build_status === 'failed').map((d) => d.body.build_id as number);
    assert.deepEqual(failedJobHooks.sort(), jobs.map((j: { id: number }) => j.id).sort());
    const pipelines = await ok(a, 'GET', `/projects/${project.id}/pipelines`);
    const failedPipelineHooks = deliveries.filter((d) => d.event === 'Pipeline Hook' && d.body.object_attributes.status === 'failed')
      .map((d) => d.body.object_attributes.id as number);
    assert.deepEqual(failedPipelineHooks.sort(), pipelines.map((p: { id: number }) => p.id).sort());
  });

  it('shows a storage move whose instance was killed mid-copy on the other, which finishes it', async () => {
    const project = await ok(a, 'POST', '/projects', { json: { name: 'moving', visibility: 'private' } });
    const row = await database.db.selectFrom('projects').select(['disk_path']).where('id', '=', project.id).executeTakeFirstOrThrow();
    const source = path.join(shards.dirs.default, row.disk_path);
    await fillRepository(source, 'moving', 5);
    const before = refs(source);

    const move = await ok(a, 'POST', `/projects/${project.id}/repository_storage_moves`, { json: { destination_storage_name: 'b' } });
    // Whichever instance claimed the move is copying now (each pauses 3 s after copying): kill it.
    const owner = await waitFor('the move to be claimed', async () => {
      const job = await database.db.selectFrom('background_jobs').select(['lease_owner']).where('kind', '=', 'storage_moves.run')
        .where('lease_owner', 'is not', null).executeTakeFirst();
      const tmp = await fs.readdir(path.join(shards.dirs.b, '.kiln-moves')).catch(() => []);
      return job?.lease_owner && tmp.length > 0 ? job.lease_owner : undefined;
    }, 30_000);
    const pid = Number(owner.split(':')[1]);
    const [victim, survivor] = pid === a.child.pid ? [a, b] : [b, a];
    assert.equal(victim.child.pid, pid, `the move's lease is held by ${owner}, neither instance`);
    await stop(victim, 'SIGKILL');

    // Visible on the survivor at once, still under way; the project still reads from its source.
    const seen = await ok(survivor, 'GET', `/projects/${project.id}/repository_storage_moves/${move.id}`);
    assert.equal(seen.state, 'started');
    assert.equal((await ok(survivor, 'GET', `/projects/${project.id}`)).repository_storage, 'default');
    assert.equal(refs(source), before);

    const finished = await waitFor('the survivor to finish the move', async () => {
      const m = await ok(survivor, 'GET', `/projects/${project.id}/repository_storage_moves/${move.id}`);
      return m.state === 'finished' || m.state === 'failed' ? m : undefined;
    }, 60_000);
    assert.equal(finished.state, 'finished', JSON.stringify(finished));
    assert.equal((await ok(survivor, 'GET', `/projects/${project.id}`)).repository_storage, 'b');
    assert.equal(refs(path.join(shards.dirs.b, row.disk_path)), before);
    const branches = await ok(survivor, 'GET', `/projects/${project.id}/repository/branches`);
    assert.ok(branches.some((br: { name: string }) => br.name === 'main'));
    assert.deepEqual(await fs.readdir(path.join(shards.dirs.b, '.kiln-moves')), []);
  });
});
