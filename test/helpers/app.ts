/**
 * A real kiln for one test file: a fresh data directory, a fresh database (SQLite by default;
 * a new PostgreSQL database when KILN_TEST_DB=postgres, created from TEST_DATABASE_URL and dropped
 * afterwards), migrations, first boot with a known root token, and the app ready for inject().
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance, FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { loadConfig } from '../../src/config/load.ts';
import type { Config } from '../../src/config/schema.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { DB } from '../../src/db/types.ts';
import type { WriteEpoch } from '../../src/db/write-epoch.ts';
import type { QueryLog } from '../../src/db/query-log.ts';
import { bootstrapInstance } from '../../src/domain/instance/bootstrap.ts';
import { buildApp } from '../../src/app.ts';
import { startSshServer } from '../../src/git/ssh-server.ts';
import { resolveJobToken } from '../../src/domain/jobs/job-token.ts';
import { joinCluster } from '../../src/cluster/cluster.ts';

export const ROOT_TOKEN = 'root-token-for-tests-0001';

export const testDialect = (): 'sqlite' | 'postgres' => (process.env.KILN_TEST_DB === 'postgres' ? 'postgres' : 'sqlite');

export interface TestApp {
  app: FastifyInstance;
  db: Kysely<DB>;
  config: Config;
  dataDir: string;
  dialect: 'sqlite' | 'postgres';
  /** The write epoch of `db` (src/db/write-epoch.ts). */
  writes: WriteEpoch;
  /** The port of git over SSH when started with `ssh: true`. */
  sshPort?: number;
  /** inject() with PRIVATE-TOKEN set when `token` is given. */
  request(opts: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A fresh, empty PostgreSQL database next to TEST_DATABASE_URL's, with a way to drop it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `kiln_test_${crypto.randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      // pg's Pool.end() resolves before its backends have gone; terminating one that is still
      // leaving makes its socket emit an error nobody listens to. Wait for them (briefly) first.
      for (let i = 0; i < 200; i++) {
        const { rows } = await c.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
        if (rows[0].n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export interface TestAppOptions {
  /** Test-only plugins registered after kiln's routes and before ready() (e.g. a probe route). */
  plugins?: FastifyPluginAsync[];
  /** Where pino writes; logging is off unless this is given (set LOG_LEVEL in env too). */
  logStream?: NodeJS.WritableStream;
  /** Told every statement the app runs (src/db/query-log.ts). */
  queryLog?: QueryLog;
  /** Start git over SSH on a free port of 127.0.0.1 (TestApp.sshPort); test apps have none otherwise. */
  ssh?: boolean;
}

export async function startTestApp(env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-test-'));
  const dialect = testDialect();
  const pgdb = dialect === 'postgres' ? await createPostgresDatabase() : null;
  const config = loadConfig({
    KILN_DATA_DIR: dataDir,
    KILN_EXTERNAL_URL: 'http://kiln.test',
    KILN_ROOT_TOKEN: ROOT_TOKEN,
    KILN_ROOT_PASSWORD: 'root-password-1234',
    KILN_RATE_LIMIT_PER_IP: '0',
    KILN_RATE_LIMIT_PER_USER: '0',
    LOG_LEVEL: 'silent',
    ...(pgdb ? { DATABASE_URL: pgdb.url } : {}),
    ...env,
  });
  const database: Database = openDatabase({ ...config, queryLog: opts.queryLog });
  await migrateToLatest(database.db);
  const boot = await bootstrapInstance(database.db, { rootPassword: config.rootPassword, rootToken: config.rootToken, dialect: database.dialect });
  return serve(config, database, boot.secretKeyBase, opts, async () => {
    await pgdb?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
}

/**
 * A second server process of `t`'s instance: its own database handle on the same database and
 * data directory, its own caches, and (with KILN_REDIS_URL) its own Redis connections. Close it
 * before `t`, which removes the database.
 */
export async function startPeerApp(t: TestApp, opts: TestAppOptions = {}): Promise<TestApp> {
  const database = openDatabase(t.config);
  const boot = await bootstrapInstance(database.db, { rootPassword: null, rootToken: null, dialect: database.dialect });
  return serve(t.config, database, boot.secretKeyBase, opts, async () => {});
}

async function serve(config: Config, database: Database, secretKeyBase: string, opts: TestAppOptions, cleanUp: () => Promise<void>): Promise<TestApp> {
  const cluster = config.redisUrl ? await joinCluster({ redisUrl: config.redisUrl, secretKeyBase, writes: database.writes }) : null;
  const app = await buildApp(config, {
    database, secretKeyBase, version: { version: '15.2.0', revision: 'test' }, jobTokens: resolveJobToken, cluster,
    ...(opts.logStream ? { logStream: opts.logStream } : { logger: false }),
  });
  for (const plugin of opts.plugins ?? []) await app.register(plugin);
  await app.ready();
  await app.workers.start();
  // Port 0: the system picks a free one, so test files running side by side never collide.
  const ssh = opts.ssh ? await startSshServer({ db: database.db, config }, app.log, { port: 0, host: '127.0.0.1' }) : null;
  return {
    app, db: database.db, config, dataDir: config.dataDir, dialect: database.dialect, writes: database.writes,
    ...(ssh ? { sshPort: ssh.port } : {}),
    request: ({ token, headers, ...inject }) => app.inject({ ...inject, headers: { ...(token ? { 'private-token': token } : {}), ...headers } }),
    close: async () => {
      await ssh?.close();
      await app.close();
      await app.runningHandlers.settled(10_000);
      await database.close();
      await cluster?.close();
      await cleanUp();
    },
  };
}
