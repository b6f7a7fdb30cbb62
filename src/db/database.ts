/**
 * The one place that chooses a database engine: the embedded SQLite file under KILN_DATA_DIR by
 * default, PostgreSQL when DATABASE_URL is set (DESIGN, Stack). Everything above this file speaks
 * Kysely and stays dialect-neutral: timestamps are ISO-8601 UTC text, booleans are 0/1 integers,
 * lists of scopes are space-separated text.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteQueryCompiler, sql,
  type Dialect as KyselyDialect, type LogEvent,
} from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { DB } from './types.ts';
import { WriteEpoch } from './write-epoch.ts';
import { registerPostgresPool, registerSqliteConnection } from './prepared.ts';
import { registerReadCache } from './read-cache.ts';
import { registerQueryLog, type QueryLog } from './query-log.ts';
import { transactionBegan, transactionEnded } from './after-commit.ts';

export type Dialect = 'sqlite' | 'postgres';

/** How long a SQLite writer waits for another process's write lock before failing. */
const SQLITE_BUSY_TIMEOUT_MS = 30_000;

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /** Moves on every write through `db` (db/write-epoch.ts). */
  writes: WriteEpoch;
  close(): Promise<void>;
}

// int8 (COUNT(*), bigserial) arrives as a string by default; every count kiln takes is capped far
// below 2^53, so numbers are safe.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface OpenOptions {
  databaseUrl: string | null;
  dataDir: string;
  /** Told every statement run through the handle (db/query-log.ts); tests only. */
  queryLog?: QueryLog;
}

/** Kysely's `log` option feeding `queryLog`, when one is given. */
function kyselyLog(queryLog: QueryLog | undefined) {
  if (!queryLog) return {};
  return { log: (event: LogEvent) => queryLog(event.query.sql, event.query.parameters) };
}

export function openDatabase(opts: OpenOptions): Database {
  if (opts.databaseUrl) {
    // A bounded wait for a connection: an unreachable server fails requests (and readiness)
    // instead of hanging them.
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10, connectionTimeoutMillis: 5_000 });
    const writes = new WriteEpoch();
    const db: Kysely<DB> = new Kysely<DB>({
      dialect: countingCommits(new PostgresDialect({ pool }), writes, () => db), plugins: [writes],
      ...kyselyLog(opts.queryLog),
    });
    registerPostgresPool(db, pool);
    if (opts.queryLog) registerQueryLog(db, opts.queryLog);
    registerReadCache(db, writes);
    return { db, dialect: 'postgres', writes, close: () => db.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = new SQLite(path.join(opts.dataDir, 'kiln.sqlite3'));
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  // KILN_WORKERS' processes (and `kiln migrate` beside a server) write to this file at once. A
  // writer that finds it locked waits for the lock, up to this long, instead of failing with
  // SQLITE_BUSY; transactions take the lock when they begin (countingCommits), so none fails
  // half-way because another process wrote after it read.
  file.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  const writes = new WriteEpoch();
  const db: Kysely<DB> = new Kysely<DB>({
    dialect: countingCommits(new StableSqliteDialect({ database: withStatementCache(file) }), writes, () => db, 'begin immediate'),
    plugins: [writes], ...kyselyLog(opts.queryLog),
  });
  registerSqliteConnection(db, file);
  if (opts.queryLog) registerQueryLog(db, opts.queryLog);
  registerReadCache(db, writes);
  return { db, dialect: 'sqlite', writes, close: () => db.destroy() };
}

/**
 * The dialect, with every committed transaction that wrote moving the write epoch (write-epoch.ts
 * says why). A transaction that only read (a job queue's empty poll) leaves it alone: moving it
 * would drop every remembered row, here and, through Redis, on every other process. What was to
 * run after the commit (after-commit.ts) runs then, once the epoch moved; a rollback drops it.
 */
function countingCommits(dialect: KyselyDialect, writes: WriteEpoch, root: () => Kysely<DB>, beginStatement?: string): KyselyDialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => {
      const driver = dialect.createDriver();
      const begin = driver.beginTransaction.bind(driver);
      const commit = driver.commitTransaction.bind(driver);
      const rollback = driver.rollbackTransaction.bind(driver);
      // The epoch when each connection's open transaction began; any write moves it since.
      const startedAt = new WeakMap<object, number>();
      driver.beginTransaction = async (connection, settings) => {
        startedAt.set(connection, writes.value);
        transactionBegan(connection, root());
        // SQLite: a deferred transaction that reads and then writes cannot wait for the lock when
        // another process committed in between (SQLITE_BUSY_SNAPSHOT, which the busy timeout does
        // not cover); an immediate one takes the write lock first, waiting for it if need be.
        if (beginStatement) await connection.executeQuery(CompiledQuery.raw(beginStatement));
        else await begin(connection, settings);
      };
      driver.commitTransaction = async (connection) => {
        await commit(connection);
        if (startedAt.get(connection) !== writes.value) writes.committed();
        transactionEnded(connection, true);
      };
      driver.rollbackTransaction = async (connection) => {
        transactionEnded(connection, false);
        await rollback(connection);
      };
      return driver;
    },
  };
}

/**
 * SQLite's planner may read the value bound to a bare `?` (a LIMIT's, an equality's on a range it
 * reads in index order, LIKE's pattern) and then marks the statement to be prepared again whenever
 * that parameter is bound anew, which better-sqlite3 does on every run: kiln's list statements
 * were planned again on each use. Measured on the bench database (SQLite 3.54, median of 15
 * rounds): a page of 21 jobs, `project_id = ? and type = ? order by id desc limit 21 offset ?`,
 * 77 µs as written and 37 µs with `+?`; the ids of a project's pipelines 21 → 5 µs. Unary plus
 * returns its operand unchanged and, like a bound parameter, has no affinity, so the statements
 * mean the same (test/db/stable-parameters.test.ts compares the two value by value); the planner
 * only gives up choosing a plan by a bound value, which no list of kiln's did: the plans of every
 * list statement (test/api/query-plans.test.ts) are the same either way.
 */
class StableParameterCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return '+?';
  }
}

class StableSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): SqliteQueryCompiler {
    return new StableParameterCompiler();
  }
}

const STATEMENT_CACHE_SIZE = 1000;

/**
 * Kysely prepares every query anew, and preparing costs SQLite more than running a point read
 * (measured: ~115 µs of a ~200 µs request). kiln's queries come from a small set of builders, so
 * the compiled SQL repeats: keep prepared statements by SQL text. Kysely runs one query at a
 * time on this connection, so a statement is never used by two queries at once.
 */
function withStatementCache(file: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = file.prepare.bind(file);
  return new Proxy(file, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') return Reflect.get(target, prop, receiver);
      return (source: string) => {
        let stmt = cache.get(source);
        if (stmt === undefined) {
          stmt = prepare(source);
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
          cache.set(source, stmt);
        }
        return stmt;
      };
    },
  });
}

/** True when the database answers a trivial query; used by /-/readiness. */
export async function ping(db: Kysely<DB>, timeoutMs = 3_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
  try {
    return await Promise.race([sql`select 1`.execute(db).then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
