/**
 * `npm start` (`node src/main.ts serve`) as an operator meets it: a bad environment stops it with
 * the readable list of problems; a first boot creates root and the `initial` token; a second boot
 * changes nothing (CONTRACT §1, §2). Runs the real entry point in a child process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { verifyPassword } from '../../src/domain/users/password.ts';
import { createPostgresDatabase, testDialect } from '../helpers/app.ts';
import { freePort } from '../helpers/listen.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(ROOT, 'src/main.ts');
const TOKEN = 'first-boot-token-0001';

/** The environment without any KILN_/DATABASE_ variables of the machine running the tests. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('KILN_') && k !== 'DATABASE_URL' && k !== 'PORT' && k !== 'LOG_LEVEL') env[k] = v;
  }
  // No git over SSH on its default port: test files run side by side.
  return { ...env, KILN_SSH_PORT: '0', ...extra };
}

interface Boot {
  stdout: string;
  status: number | null;
  /** GET /api/v4/user with the given token while the server ran. */
  me: { status: number; body: Record<string, unknown> } | null;
}

/** Starts `kiln serve`, waits until it listens, asks GET /user with `token`, then stops it with SIGTERM. */
async function serveOnce(env: Record<string, string>, token: string, during?: () => Promise<void>): Promise<Boot> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'serve'], { cwd: ROOT, env: cleanEnv({ ...env, PORT: String(port), LOG_LEVEL: 'info' }) });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kiln did not start: ${stdout}${stderr}`)), 20_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('Server listening at')) { clearTimeout(timer); resolve(); }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`kiln exited ${code}: ${stdout}${stderr}`)); });
  });
  const res = await fetch(`http://127.0.0.1:${port}/api/v4/user`, { headers: { 'private-token': token } });
  const me = { status: res.status, body: await res.json() as Record<string, unknown> };
  await during?.();
  child.kill('SIGTERM');
  return { stdout, status: await exited, me };
}

/** The host key a listening SSH server offers (ssh-keyscan), without its host name. */
function hostKeyOf(port: number): Promise<string> {
  return new Promise((resolve) => {
    execFile('ssh-keyscan', ['-p', String(port), '-t', 'ed25519', '127.0.0.1'], (_err, stdout) => {
      resolve(stdout.split('\n').find((l) => l.includes('ssh-ed25519'))?.split(' ').slice(1).join(' ') ?? '');
    });
  });
}

describe('kiln serve', () => {
  it('stops with the readable list of problems when the environment is wrong', () => {
    const run = spawnSync(process.execPath, [MAIN, 'serve'], {
      cwd: ROOT, encoding: 'utf8', timeout: 20_000,
      env: cleanEnv({ PORT: 'abc', LOG_LEVEL: 'loud', KILN_EXTERNAL_URL: 'ftp://x', KILN_DATA_DIR: path.join(os.tmpdir(), 'kiln-never-created') }),
    });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'kiln cannot start; the configuration has 3 problem(s):\n' +
      '  - PORT must be a whole number, got "abc" (HTTP port)\n' +
      '  - KILN_EXTERNAL_URL must use http: or https:, got "ftp:" (the base URL kiln names itself by (web_url, Link headers, OAuth issuer, clone URLs))\n' +
      '  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (pino log level)\n');
  });
});

describe('first and second boot', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let drop: (() => Promise<void>) | null = null;
  let database: Database | null = null;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-boot-'));
    env = { KILN_DATA_DIR: dataDir, KILN_ROOT_TOKEN: TOKEN };
    if (testDialect() === 'postgres') {
      const pgdb = await createPostgresDatabase();
      env.DATABASE_URL = pgdb.url;
      drop = pgdb.drop;
    }
  });
  after(async () => {
    await database?.close();
    await drop?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const open = () => (database ??= openDatabase({ databaseUrl: env.DATABASE_URL ?? null, dataDir }));

  it('migrates, creates root id 1 and the initial token of exactly KILN_ROOT_TOKEN, and prints a generated password once', async () => {
    const first = await serveOnce(env, TOKEN);
    assert.equal(first.status, 0, 'SIGTERM shuts down cleanly');
    assert.equal(first.me?.status, 200);
    assert.equal(first.me?.body.id, 1);
    assert.equal(first.me?.body.username, 'root');
    assert.equal(first.me?.body.is_admin, true);

    const printed = [...first.stdout.matchAll(/^kiln: created root with password (\S+)$/gm)].map((m) => m[1]);
    assert.equal(printed.length, 1);

    const { db } = open();
    const root = await db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    assert.equal(root.username, 'root');
    assert.equal(root.email, 'admin@example.com');
    assert.equal(root.admin, 1);
    assert.equal(root.state, 'active');
    assert.ok(await verifyPassword(printed[0], root.encrypted_password), 'the printed password is root\'s');
    assert.ok(!first.stdout.includes(TOKEN), 'the token itself is never printed');

    const tokens = await db.selectFrom('personal_access_tokens').selectAll().execute();
    assert.equal(tokens.length, 1);
    assert.equal(tokens[0].user_id, 1);
    assert.equal(tokens[0].name, 'initial');
    assert.equal(tokens[0].token_digest, digest(TOKEN));
    assert.equal(tokens[0].scopes, 'api read_api read_user read_repository write_repository sudo');
    assert.equal(tokens[0].expires_at, null);
    assert.equal(tokens[0].impersonation, 0);
    assert.equal(tokens[0].revoked, 0);
    const namespace = await db.selectFrom('namespaces').select(['path', 'kind']).where('owner_id', '=', 1).execute();
    assert.deepEqual(namespace, [{ path: 'root', kind: 'user' }]);
  });

  it('serves git over SSH on KILN_SSH_PORT with a host key made once, and stops it on SIGTERM', async () => {
    const sshPort = await freePort();
    const seen: string[] = [];
    for (let boot = 0; boot < 2; boot += 1) {
      const run = await serveOnce({ ...env, KILN_SSH_PORT: String(sshPort) }, TOKEN, async () => {
        // SSH listens just after HTTP does.
        let key = '';
        for (let i = 0; i < 50 && key === ''; i += 1) {
          key = await hostKeyOf(sshPort);
          if (key === '') await new Promise((resolve) => setTimeout(resolve, 100));
        }
        seen.push(key);
      });
      assert.equal(run.status, 0);
    }
    assert.match(seen[0], /^ssh-ed25519 /);
    assert.equal(seen[1], seen[0], 'the second boot keeps the first one\'s host key');
    const stat = await fs.stat(path.join(dataDir, 'keys', 'ssh_host_ed25519_key'));
    assert.equal(stat.mode & 0o777, 0o600);
    assert.equal(await hostKeyOf(sshPort), '', 'nothing listens once kiln has stopped');
  });

  it('changes nothing on a second boot, even with another token and a password', async () => {
    const { db } = open();
    const rootBefore = await db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const second = await serveOnce({ ...env, KILN_ROOT_TOKEN: 'another-token-0002', KILN_ROOT_PASSWORD: 'new-password-1' }, TOKEN);
    assert.equal(second.status, 0);
    assert.equal(second.me?.status, 200, 'the first token still works');
    assert.doesNotMatch(second.stdout, /created root/);
    const rootAfter = await db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    assert.deepEqual({ ...rootAfter, last_activity_on: null }, { ...rootBefore, last_activity_on: null });
    assert.equal(await verifyPassword('new-password-1', rootAfter.encrypted_password), false);
    const tokens = await db.selectFrom('personal_access_tokens').select(['name', 'token_digest']).execute();
    assert.deepEqual(tokens, [{ name: 'initial', token_digest: digest(TOKEN) }]);
    const users = await db.selectFrom('users').select('id').execute();
    assert.equal(users.length, 1);
  });

  it('lets `kiln migrate` find nothing left to apply', () => {
    const run = spawnSync(process.execPath, [MAIN, 'migrate'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000, env: cleanEnv(env) });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '');
  });

  it('still refuses a database that ran a migration this kiln does not have (the up-to-date check falls through to the migrator)', async () => {
    const { db } = open();
    await db.insertInto('kysely_migration' as never).values({ name: '2099-01-01T0000_from_a_newer_kiln', timestamp: new Date().toISOString() } as never).execute();
    try {
      const run = spawnSync(process.execPath, [MAIN, 'migrate'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000, env: cleanEnv(env) });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /2099-01-01T0000_from_a_newer_kiln/);
    } finally {
      await db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '2099-01-01T0000_from_a_newer_kiln' as never).execute();
    }
  });
});
