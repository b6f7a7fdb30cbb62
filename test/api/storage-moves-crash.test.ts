/**
 * Crash safety of storage moves (issue 7): a real `kiln serve` child process with a shared data
 * directory, database and shards is killed with SIGKILL in the middle of moves and started again.
 * While it is dead, every container must point at a complete repository with its original refs
 * (never a half copy); after the restart, expired leases are taken over, the moves resume, and
 * every repository ends on the new shard with every ref intact and nothing left behind.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createPostgresDatabase, testDialect } from '../helpers/app.ts';
import { freePort } from '../helpers/listen.ts';
import { fillRepository, makeShards, refs, waitFor, exists, type Shards } from '../helpers/storage-shards.ts';

const TOKEN = 'crash-test-root-token-0001';
let shards: Shards;
let dataDir: string;
let pg: { url: string; drop: () => Promise<void> } | null = null;
let server: ChildProcess | null = null;
let baseUrl = '';

before(async () => {
  shards = await makeShards(['default', 'b']);
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-crash-'));
  if (testDialect() === 'postgres') pg = await createPostgresDatabase();
});
after(async () => {
  server?.kill('SIGKILL');
  await pg?.drop();
  await shards.remove();
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function start(delayMs: number): Promise<void> {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['src/main.ts', 'serve'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), KILN_EXTERNAL_URL: baseUrl,
      KILN_DATA_DIR: dataDir, KILN_SSH_PORT: '0', KILN_STORAGES: shards.env, KILN_ROOT_TOKEN: TOKEN, KILN_ROOT_PASSWORD: 'root-password-1234',
      KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'error',
      KILN_JOB_POLL_MS: '50', KILN_JOB_LEASE_SECONDS: '2', KILN_STORAGE_MOVE_TEST_DELAY_MS: String(delayMs),
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    },
  });
  await waitFor('the server', async () => (await fetch(`${baseUrl}/-/readiness`).then((r) => r.ok, () => false)) || undefined);
}

async function kill(): Promise<void> {
  const child = server!;
  server = null;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function api(method: string, url: string, body?: object) {
  const r = await fetch(`${baseUrl}/api/v4${url}`, {
    method, headers: { 'private-token': TOKEN, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, json: await r.json() as any };
}

async function withDb<T>(fn: (db: Database['db']) => Promise<T>): Promise<T> {
  const database = openDatabase({ databaseUrl: pg?.url ?? null, dataDir });
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

type Snapshot = Map<number, string>;

/** While no server runs: every project's row names a shard holding its complete repository. */
async function assertEveryProjectWhole(expected: Snapshot): Promise<{ onDefault: number; onB: number }> {
  const rows = await withDb((db) => db.selectFrom('projects').select(['id', 'repository_storage', 'disk_path']).execute());
  const count = { onDefault: 0, onB: 0 };
  for (const row of rows) {
    const repo = path.join(shards.dirs[row.repository_storage], row.disk_path);
    assert.equal(refs(repo), expected.get(row.id), `project ${row.id} on ${row.repository_storage} is not its whole repository`);
    if (row.repository_storage === 'default') count.onDefault += 1;
    else count.onB += 1;
  }
  return count;
}

test('SIGKILL in the middle of copying, then a restart: the moves resume and every repository arrives whole', async () => {
  await start(3000);
  const expected: Snapshot = new Map();
  for (let i = 0; i < 4; i++) {
    const r = await api('POST', '/projects', { name: `crash-${i}`, path: `crash-${i}` });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const repo = path.join(shards.dirs.default, 'root', `crash-${i}.git`);
    await fillRepository(repo, `crash${i}`, 5);
    expected.set(r.json.id, refs(repo));
  }
  assert.equal((await api('POST', '/project_repository_storage_moves', { source_storage_name: 'default', destination_storage_name: 'b' })).status, 202);

  // Copies are on the destination, the moves pause before verifying: kill the server now.
  await waitFor('copies in progress', async () => {
    const tmp = await fs.readdir(path.join(shards.dirs.b, '.kiln-moves')).catch(() => []);
    return tmp.length > 0 ? true : undefined;
  });
  await kill();
  const moves = await withDb((db) => db.selectFrom('project_repository_storage_moves').select('state').execute());
  assert.ok(moves.some((m) => m.state === 3), 'some moves were started when the server died');
  assert.deepEqual(await assertEveryProjectWhole(expected), { onDefault: 4, onB: 0 });

  await start(0);
  await waitFor('every move to finish', async () => {
    const list = (await api('GET', '/project_repository_storage_moves')).json as { state: string }[];
    return list.length === 4 && list.every((m) => m.state === 'finished') ? true : undefined;
  }, 60_000);
  assert.deepEqual((await api('GET', '/projects?repository_storage=default')).json, []);
  await kill();
  assert.deepEqual(await assertEveryProjectWhole(expected), { onDefault: 0, onB: 4 });
  for (let i = 0; i < 4; i++) assert.equal(await exists(path.join(shards.dirs.default, 'root', `crash-${i}.git`)), false);
  assert.deepEqual(await fs.readdir(path.join(shards.dirs.b, '.kiln-moves')), []);
  const flags = await withDb((db) => db.selectFrom('projects').select('read_only').execute());
  assert.ok(flags.every((f) => f.read_only === 0));
});

test('SIGKILL at arbitrary moments of moving back: no container ever points at a half copy', async () => {
  await start(0);
  const rows = (await api('GET', '/projects?per_page=100')).json as { id: number }[];
  const expected: Snapshot = new Map();
  await withDb(async (db) => {
    for (const p of await db.selectFrom('projects').select(['id', 'repository_storage', 'disk_path']).execute()) {
      expected.set(p.id, refs(path.join(shards.dirs[p.repository_storage], p.disk_path)));
    }
  });
  assert.equal(rows.length, 4);
  assert.equal((await api('POST', '/project_repository_storage_moves', { source_storage_name: 'b', destination_storage_name: 'default' })).status, 202);
  // Kill at a different point of the moves each time, check, restart.
  for (const afterMs of [30, 90, 160, 250]) {
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    await kill();
    await assertEveryProjectWhole(expected);
    await start(0);
  }
  await waitFor('every move back to finish', async () => {
    const list = (await api('GET', '/project_repository_storage_moves?per_page=100')).json as { state: string; source_storage_name: string }[];
    const back = list.filter((m) => m.source_storage_name === 'b');
    return back.length === 4 && back.every((m) => m.state === 'finished') ? true : undefined;
  }, 60_000);
  await kill();
  assert.deepEqual(await assertEveryProjectWhole(expected), { onDefault: 4, onB: 0 });
  assert.deepEqual(await fs.readdir(path.join(shards.dirs.default, '.kiln-moves')).catch(() => []), []);
});
