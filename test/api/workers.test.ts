/**
 * KILN_WORKERS (README, Configuration; issue 17 item 4): `kiln serve` with two server processes on
 * one port, started as an operator starts it, without Redis. A change made through one process is
 * seen by the other at once (through the primary); writers in both processes at the same moment
 * all succeed (SQLite waits for its write lock instead of answering SQLITE_BUSY); SIGTERM stops
 * every process cleanly.
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

const ROOT_TOKEN = 'workers-root-token-0001';
const MAIN = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * One request on a connection of its own: the primary hands connections to the workers in turn,
 * so successive requests land on both processes (a kept-alive connection would stay on one).
 */
function request(port: number, method: string, url: string, o: { token?: string; json?: unknown } = {}): Promise<Answer> {
  const body = o.json === undefined ? undefined : JSON.stringify(o.json);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method, path: url, agent: false,
      headers: { ...(o.token ? { 'private-token': o.token } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Workers {
  port: number;
  /** Everything the processes printed so far. */
  output(): string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** `kiln serve` with KILN_WORKERS=2 on a fresh instance, once both processes listen; stopped after the suite. */
function startWorkers(env: Record<string, string>): () => Workers {
  let w: Workers;
  let dataDir: string;
  let dropDatabase: (() => Promise<void>) | null = null;
  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-workers-'));
    const pgdb = testDialect() === 'postgres' ? await createPostgresDatabase() : null;
    dropDatabase = pgdb?.drop ?? null;
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...process.env, KILN_WORKERS: '2', KILN_SSH_PORT: '0', PORT: String(port), HOST: '127.0.0.1', KILN_DATA_DIR: dataDir,
        KILN_EXTERNAL_URL: `http://127.0.0.1:${port}`, KILN_ROOT_TOKEN: ROOT_TOKEN, KILN_ROOT_PASSWORD: 'root-password-1234',
        KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'info', KILN_REDIS_URL: '',
        DATABASE_URL: pgdb ? pgdb.url : '', ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    w = { port, output: () => output, child, exited };
    // Both processes say they listen (boot takes seconds on a loaded machine).
    const until = Date.now() + 90_000;
    while (listeningPids(output).size < 2) {
      assert.ok(Date.now() < until, `the workers never both listened:\n${output}`);
      assert.equal(child.exitCode, null, `kiln exited:\n${output}`);
      await sleep(100);
    }
  });
  after(async () => {
    if (w && w.child.exitCode === null) {
      w.child.kill('SIGKILL');
      await w.exited;
    }
    await dropDatabase?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  return () => w;
}

function listeningPids(output: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.includes('Server listening')) continue;
    pids.add((JSON.parse(line) as { pid: number }).pid);
  }
  return pids;
}

/** The pids of the processes that answered requests for `url`, from the request log. */
function answeringPids(output: string, url: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { pid: number; url: string };
    if (entry.url === url) pids.add(entry.pid);
  }
  return pids;
}

/** A token revoked through one process is refused by both within moments (their caches keep it 5 s). */
async function revokedEverywhere(port: number): Promise<void> {
  const created = await request(port, 'POST', '/api/v4/users/1/personal_access_tokens', { token: ROOT_TOKEN, json: { name: 'workers', scopes: ['api'] } });
  assert.equal(created.status, 201, created.body);
  const token = (JSON.parse(created.body) as { token: string }).token;
  // Both processes remember the token.
  for (let i = 0; i < 6; i++) assert.equal((await request(port, 'GET', '/api/v4/user', { token })).status, 200);
  assert.equal((await request(port, 'DELETE', '/api/v4/personal_access_tokens/self', { token })).status, 204);
  // The other process hears of it within moments, long before its cache would expire (5 s from
  // the reads above); afterwards no request on either process is answered with the token.
  await heardWithin(2_500, async () => {
    for (let i = 0; i < 6; i++) assert.equal((await request(port, 'GET', '/api/v4/user', { token })).status, 401, `request ${i + 1}`);
  });
}

/**
 * Runs `check` until it passes or `ms` have gone by. A message between processes arrives in
 * moments, but "moments" on a machine running three test files at once can exceed a fixed sleep;
 * the bound stays under the 5 s a cached row lives, so passing still proves the message came.
 */
async function heardWithin(ms: number, check: () => Promise<void>): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    await sleep(100);
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
  }
}

describe('KILN_WORKERS=2', () => {
  const workers = startWorkers({});
  let port: number;
  before(() => {
    port = workers().port;
  });

  it('serves from two processes on one port', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await request(port, 'GET', '/api/v4/version', { token: ROOT_TOKEN });
      assert.equal(res.status, 200, res.body);
    }
    await sleep(100);
    assert.equal(answeringPids(workers().output(), '/api/v4/version').size, 2, workers().output());
  });

  it('refuses a revoked token on every process at once, without Redis', async () => {
    await revokedEverywhere(port);
  });

  it('shows a changed user on every process at once, without Redis', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await request(port, 'GET', '/api/v4/users/1', { token: ROOT_TOKEN })).status, 200);
    const changed = await request(port, 'PUT', '/api/v4/users/1', { token: ROOT_TOKEN, json: { bio: 'changed through one process' } });
    assert.equal(changed.status, 200, changed.body);
    await heardWithin(2_500, async () => {
      for (let i = 0; i < 4; i++) {
        const res = await request(port, 'GET', '/api/v4/users/1', { token: ROOT_TOKEN });
        assert.equal((JSON.parse(res.body) as { bio: string }).bio, 'changed through one process', `request ${i + 1}`);
      }
    });
  });

  it('lets writers in both processes write at once: none fails with a busy database', async () => {
    // Creating a user writes several rows in one transaction; twenty at once, spread over both
    // processes, contend for the database's write lock.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => request(port, 'POST', '/api/v4/users', {
      token: ROOT_TOKEN,
      json: { username: `writer${i}`, email: `writer${i}@example.com`, name: `Writer ${i}`, password: 'writer-password-1234', skip_confirmation: true },
    })));
    for (const [i, res] of results.entries()) assert.equal(res.status, 201, `user ${i}: ${res.status} ${res.body}`);
    // Tokens too: single statements outside a transaction.
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => request(port, 'POST', '/api/v4/users/1/personal_access_tokens', {
      token: ROOT_TOKEN, json: { name: `concurrent ${i}`, scopes: ['read_api'] },
    })));
    for (const [i, res] of tokens.entries()) assert.equal(res.status, 201, `token ${i}: ${res.status} ${res.body}`);
    assert.equal(answeringPids(workers().output(), '/api/v4/users').size, 2, 'the writes did not reach both processes');
    assert.doesNotMatch(workers().output(), /SQLITE_BUSY|database is locked/);
  });

  it('replaces a process that dies', async () => {
    const { output } = workers();
    const [victim] = [...listeningPids(output())];
    process.kill(victim, 'SIGKILL');
    const until = Date.now() + 90_000;
    while (![...listeningPids(output())].some((pid) => pid !== victim && !answeringPids(output(), '/api/v4/version').has(pid))) {
      assert.ok(Date.now() < until, `no process took the place of ${victim}:\n${output()}`);
      await sleep(100);
    }
    assert.match(output(), /a server process died; starting another/);
    for (let i = 0; i < 4; i++) assert.equal((await request(port, 'GET', '/api/v4/version', { token: ROOT_TOKEN })).status, 200);
  });

  it('stops every process on SIGTERM', async () => {
    const { child, exited, output } = workers();
    const pids = [...listeningPids(output())].filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    assert.equal(pids.length, 2);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output());
    for (const pid of pids) {
      assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is still running`);
    }
    assert.match(output(), /stopping the workers/);
    assert.equal(output().match(/"msg":"shutting down"/g)?.length, 2, output());
  });
});

describe('KILN_WORKERS=2 rate limits, without Redis', () => {
  const workers = startWorkers({ KILN_RATE_LIMIT_PER_USER: '6' });

  it('holds a user to one budget whichever process answers', async () => {
    const { port, output } = workers();
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request(port, 'GET', '/api/v4/user', { token: ROOT_TOKEN });
      assert.equal(res.status, 200, `request ${i + 1}: ${res.body}`);
      remaining.push(String(res.headers['x-ratelimit-remaining']));
    }
    assert.deepEqual(remaining, ['5', '4', '3', '2', '1', '0']);
    for (let i = 0; i < 2; i++) {
      const refused = await request(port, 'GET', '/api/v4/user', { token: ROOT_TOKEN });
      assert.deepEqual([refused.status, refused.body], [429, 'Retry later\n']);
    }
    await sleep(100);
    assert.equal(answeringPids(output(), '/api/v4/user').size, 2, 'the requests did not reach both processes');
  });
});

describe('KILN_WORKERS=2 with Redis', () => {
  const workers = startWorkers({ KILN_REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', KILN_RATE_LIMIT_PER_USER: '1000' });

  it('shares invalidations through Redis, as separately started processes do', async () => {
    await revokedEverywhere(workers().port);
  });

  it('counts rate budgets in Redis: one budget across the processes', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request(workers().port, 'GET', '/api/v4/user', { token: ROOT_TOKEN });
      assert.equal(res.status, 200, res.body);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    // Each request takes one from the shared budget. A step back up to 999 is the minute's window
    // ending between two requests (a slow machine); counting per process would instead repeat a
    // value (999, 999, 998, 998…), which neither case allows.
    const steps = remaining.slice(1).map((r, i) => (r === 999 && remaining[i] < 999 ? 'new window' : remaining[i] - r));
    assert.ok(steps.every((s) => s === 1 || s === 'new window') && steps.filter((s) => s === 1).length >= 4,
      `remaining: ${remaining.join(', ')}\n${workers().output().slice(-4000)}`);
  });
});
