/**
 * Storage moves and git pushes in progress (issue 7): a push that passed the read-only check is
 * recorded as a write in progress until its git processes have exited, and while it is, a move
 * of its repository is refused with the Service's "Git transfer in progress" (single: 400;
 * bulk: the container is skipped), so the pushed commit is never lost. The record goes when the
 * push ends however it ends (success, client gone, time limit), and one left behind by a dead
 * process stops counting when it expires.
 *
 * Pushes are held open by a pre-receive hook that waits for a gate file: receive-pack has the
 * pack and waits to update the refs, as a slow push does.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { cloneUrl, git, tempDir } from '../helpers/git.ts';
import { exists, git as gitDir, makeShards, waitFor, type Shards } from '../helpers/storage-shards.ts';

const IN_PROGRESS = { message: { project: ['Git transfer in progress'] } };
const GRACE_MS = 5 * 60_000;

let t: ListeningTestApp;
let shards: Shards;
let work: string;

before(async () => {
  shards = await makeShards(['default', 'b']);
  work = await tempDir();
  t = await startListeningApp({ KILN_STORAGES: shards.env, KILN_JOB_POLL_MS: '50' });
});
after(async () => {
  await t.close();
  await shards.remove();
  await fs.rm(work, { recursive: true, force: true });
});

type App = Pick<ListeningTestApp, 'request' | 'db' | 'url'>;

const api = (app: App, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token: ROOT_TOKEN });

interface Project { id: number; path_with_namespace: string; disk_path: string; repository_storage: string }

/** A project with a README commit on main, and a clone of it with one more commit to push. */
async function projectWithClone(app: App, dirs: Record<string, string>, name: string) {
  const r = await api(app, 'POST', '/projects', { name, path: name, initialize_with_readme: true });
  assert.equal(r.statusCode, 201, r.body);
  const project = { ...r.json(), ...(await app.db.selectFrom('projects').select(['disk_path', 'repository_storage']).where('id', '=', r.json().id).executeTakeFirstOrThrow()) } as Project;
  assert.equal(project.repository_storage, 'default');
  const clone = path.join(work, `${name}-${Date.now()}`);
  const url = cloneUrl(app.url, project.path_with_namespace, { username: 'root', password: ROOT_TOKEN });
  const cloned = await git(['clone', '-q', url, clone], work);
  assert.equal(cloned.code, 0, cloned.stderr);
  await fs.writeFile(path.join(clone, 'pushed.txt'), `pushed to ${name}\n`);
  assert.equal((await git(['add', 'pushed.txt'], clone)).code, 0);
  assert.equal((await git(['commit', '-q', '-m', 'Pushed during a move'], clone)).code, 0);
  const pushed = (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
  const before = (await git(['rev-parse', 'origin/main'], clone)).stdout.trim();
  return { project, clone, pushed, before, source: path.join(dirs.default, project.disk_path) };
}

/** A pre-receive hook in `repo` that waits until the gate opens; `entered` resolves once it runs. */
async function holdPushes(repo: string) {
  const gate = await tempDir('kiln-gate-');
  const hook = path.join(repo, 'hooks', 'pre-receive');
  await fs.mkdir(path.dirname(hook), { recursive: true });
  await fs.writeFile(hook, `#!/bin/sh\ntouch '${gate}/entered'\nwhile [ ! -e '${gate}/open' ]; do sleep 0.05; done\n`, { mode: 0o755 });
  return {
    entered: () => waitFor('the push to reach pre-receive', async () => (await exists(path.join(gate, 'entered'))) || undefined),
    open: async () => {
      await fs.writeFile(path.join(gate, 'open'), '');
      await fs.rm(hook);
    },
    remove: async () => {
      await fs.rm(hook, { force: true });
      await fs.rm(gate, { recursive: true, force: true });
    },
  };
}

const writes = (app: App, projectId: number) =>
  app.db.selectFrom('repository_writes').selectAll().where('container_type', '=', 'project').where('container_id', '=', projectId).execute();

const moveRows = (app: App, projectId: number) =>
  app.db.selectFrom('project_repository_storage_moves').selectAll().where('project_id', '=', projectId).execute();

async function moveFinished(moveId: number) {
  const move = await waitFor(`move ${moveId}`, async () => {
    const m = (await api(t, 'GET', `/project_repository_storage_moves/${moveId}`)).json();
    return ['finished', 'failed', 'cleanup_failed'].includes(m.state) ? m : undefined;
  });
  assert.equal(move.state, 'finished', move.error_message);
}

const headOf = (repo: string) => gitDir(repo, 'rev-parse', 'refs/heads/main').trim();

test('a move is refused while a push writes, and scheduled after it; the pushed commit moves along', async () => {
  const { project, clone, pushed, before: old, source } = await projectWithClone(t, shards.dirs, 'pushed-while-moving');
  const hold = await holdPushes(source);
  const pushing = git(['push', '-q', 'origin', 'main'], clone);
  await hold.entered();

  const [record] = await writes(t, project.id);
  assert.ok(record, 'the push recorded its write');
  assert.match(record.owner, /:\d+$/);
  assert.ok(Date.parse(record.expires_at) - Date.parse(record.started_at) >= 3600_000 + GRACE_MS);

  const refused = await api(t, 'POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.deepEqual(refused.json(), IN_PROGRESS);
  // Nothing of the refused schedule stays: no move, the project writable where it was.
  assert.deepEqual(await moveRows(t, project.id), []);
  const row = await t.db.selectFrom('projects').select(['read_only', 'repository_storage']).where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { read_only: 0, repository_storage: 'default' });
  assert.equal(headOf(source), old);

  await hold.open();
  const done = await pushing;
  assert.equal(done.code, 0, done.stderr);
  assert.equal(headOf(source), pushed);
  assert.deepEqual(await writes(t, project.id), [], 'the record ends with the push');

  const scheduled = await api(t, 'POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(scheduled.statusCode, 201, scheduled.body);
  await moveFinished(scheduled.json().id);
  assert.equal(await exists(source), false);
  assert.equal(headOf(path.join(shards.dirs.b, project.disk_path)), pushed);
  await hold.remove();
});

test('a bulk move skips the project a push is writing to and moves the others', async () => {
  const busy = await projectWithClone(t, shards.dirs, 'bulk-busy');
  const idle = await projectWithClone(t, shards.dirs, 'bulk-idle');
  const hold = await holdPushes(busy.source);
  const pushing = git(['push', '-q', 'origin', 'main'], busy.clone);
  await hold.entered();

  const bulk = await api(t, 'POST', '/project_repository_storage_moves', { source_storage_name: 'default', destination_storage_name: 'b' });
  assert.equal(bulk.statusCode, 202, bulk.body);
  await waitFor('the bulk job and its moves', async () => (await t.db.selectFrom('background_jobs').select('id').execute()).length === 0 || undefined);
  const [idleMove] = await moveRows(t, idle.project.id);
  assert.ok(idleMove);
  await moveFinished(idleMove.id);
  assert.deepEqual(await moveRows(t, busy.project.id), [], 'the busy project was skipped');
  const row = await t.db.selectFrom('projects').select(['read_only', 'repository_storage']).where('id', '=', busy.project.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { read_only: 0, repository_storage: 'default' });

  await hold.open();
  const done = await pushing;
  assert.equal(done.code, 0, done.stderr);
  assert.equal(headOf(busy.source), busy.pushed);

  const again = await api(t, 'POST', '/project_repository_storage_moves', { source_storage_name: 'default', destination_storage_name: 'b' });
  assert.equal(again.statusCode, 202, again.body);
  const [busyMove] = await waitFor('the second bulk move', async () => {
    const rows = await moveRows(t, busy.project.id);
    return rows.length > 0 ? rows : undefined;
  });
  await moveFinished(busyMove.id);
  assert.equal(headOf(path.join(shards.dirs.b, busy.project.disk_path)), busy.pushed);
  await hold.remove();
});

test('a client that goes away ends its push, and its record, before the move is scheduled', async () => {
  const { project, clone, before: old, source } = await projectWithClone(t, shards.dirs, 'abandoned-push');
  const hold = await holdPushes(source);
  // The client and its remote helper in a process group of their own, killed together.
  const client = spawn('git', ['push', '-q', 'origin', 'main'], {
    cwd: clone, detached: true, stdio: 'ignore',
    env: { PATH: process.env.PATH, HOME: clone, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
  });
  const exited = new Promise((resolve) => client.once('exit', resolve));
  await hold.entered();
  assert.equal((await writes(t, project.id)).length, 1);
  process.kill(-client.pid!, 'SIGKILL');
  await exited;

  await waitFor('the abandoned push to end', async () => (await writes(t, project.id)).length === 0 || undefined);
  // receive-pack was ended in its hook: the ref never moved, and nothing is left to land later.
  assert.equal(headOf(source), old);
  const scheduled = await api(t, 'POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(scheduled.statusCode, 201, scheduled.body);
  await moveFinished(scheduled.json().id);
  assert.equal(headOf(path.join(shards.dirs.b, project.disk_path)), old);
  await hold.remove();
});

test('pushes and schedules racing each other: every push that succeeds is in the repository the project ends on', async () => {
  const racers = await Promise.all([1, 2, 3, 4].map((i) => projectWithClone(t, shards.dirs, `racer-${i}`)));
  const outcomes = await Promise.all(racers.map(async (r) => {
    const [push, schedule] = await Promise.all([
      git(['push', '-q', 'origin', 'main'], r.clone),
      api(t, 'POST', `/projects/${r.project.id}/repository_storage_moves`, { destination_storage_name: 'b' }),
    ]);
    return { r, push, schedule };
  }));
  for (const { r, push, schedule } of outcomes) {
    // Refused at the ref advertisement, git prints kiln's words; refused at the pack's POST
    // (the schedule came in between), git only says 403.
    if (push.code !== 0) assert.match(push.stderr, /The repository is temporarily read-only|returned error: 403/);
    if (schedule.statusCode === 201) await moveFinished(schedule.json().id);
    else assert.deepEqual([schedule.statusCode, schedule.json()], [400, IN_PROGRESS]);
    // At least one of the two went through, and neither lost anything.
    assert.ok(push.code === 0 || schedule.statusCode === 201);
    const row = await t.db.selectFrom('projects').select('repository_storage').where('id', '=', r.project.id).executeTakeFirstOrThrow();
    assert.equal(headOf(path.join(shards.dirs[row.repository_storage], r.project.disk_path)), push.code === 0 ? r.pushed : r.before);
    assert.deepEqual(await writes(t, r.project.id), []);
  }
});

test('the record of a push whose process died blocks moves only until it expires', async () => {
  const { project } = await projectWithClone(t, shards.dirs, 'crashed-push');
  const started = new Date(Date.now() - 2 * 3600_000).toISOString();
  const [record] = await t.db.insertInto('repository_writes').values({
    container_type: 'project', container_id: project.id, started_at: started,
    expires_at: new Date(Date.now() + 60_000).toISOString(), owner: 'gone-host:4242',
  }).returning('id').execute();

  const refused = await api(t, 'POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.deepEqual(refused.json(), IN_PROGRESS);

  await t.db.updateTable('repository_writes').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', record.id).execute();
  const scheduled = await api(t, 'POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(scheduled.statusCode, 201, scheduled.body);
  await moveFinished(scheduled.json().id);
});

test('a push that outlives KILN_GIT_PUSH_TIME_LIMIT is ended with its record; the next push clears expired records', async () => {
  const limited = await makeShards(['default', 'b']);
  const app = await startListeningApp({ KILN_STORAGES: limited.env, KILN_GIT_PUSH_TIME_LIMIT: '2' });
  try {
    const { project, clone, pushed, before: old, source } = await projectWithClone(app, limited.dirs, 'endless-push');
    const expired = await app.db.insertInto('repository_writes').values({
      container_type: 'project', container_id: project.id, owner: 'gone-host:1',
      started_at: new Date(Date.now() - 3 * 3600_000).toISOString(), expires_at: new Date(Date.now() - 3600_000).toISOString(),
    }).returning('id').executeTakeFirstOrThrow();
    const hold = await holdPushes(source);
    const startedAt = Date.now();
    const pushing = git(['push', 'origin', 'main'], clone);
    await hold.entered();
    const records = await writes(app, project.id);
    assert.deepEqual(records.map((r) => r.id === expired.id), [false], 'the expired record was cleared');
    assert.equal(Date.parse(records[0].expires_at) - Date.parse(records[0].started_at), 2000 + GRACE_MS);

    const ended = await pushing;
    assert.notEqual(ended.code, 0);
    assert.ok(Date.now() - startedAt >= 1900, 'ended at the limit, not before');
    assert.deepEqual(await writes(app, project.id), []);
    assert.equal(headOf(source), old);

    await hold.remove();
    const retried = await git(['push', '-q', 'origin', 'main'], clone);
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(headOf(source), pushed);
  } finally {
    await app.close();
    await limited.remove();
  }
});
