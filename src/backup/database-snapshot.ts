/**
 * The database's cut for a backup, taken while kiln serves. Two connections of their own, apart
 * from the server's:
 *
 * - the *reader* opens one read-only snapshot transaction (SQLite: a read transaction in WAL mode,
 *   which sees the database as it was when it first read; PostgreSQL: REPEATABLE READ READ ONLY,
 *   one snapshot for every statement) and every table is dumped from it, however long that takes,
 *   while writers go on;
 * - the *fence* holds writes to the repository containers back for the moment the snapshot is
 *   taken and the refs are recorded: kiln moves a ref only inside a transaction that locks its
 *   container's row (repositories/project-repository.ts `updateRefs`), so a ref recorded under
 *   the fence is the ref that the snapshot's rows were written against. SQLite: BEGIN IMMEDIATE
 *   (the one write lock); PostgreSQL: EXCLUSIVE locks on the container tables, which let plain
 *   reads through and stop FOR UPDATE and writes. Writers wait (SQLite's busy timeout, the
 *   PostgreSQL lock queue) and then proceed: nothing is refused.
 */
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { BackupError } from './format.ts';

export interface TableDump {
  columns: string[];
  rows: AsyncIterable<unknown[]>;
}

export interface Snapshot {
  engine: 'sqlite' | 'postgres';
  tables(): Promise<string[]>;
  dump(table: string): Promise<TableDump>;
  /** Rows of a small query inside the snapshot (the repositories to record). */
  query<T>(text: string): Promise<T[]>;
  close(): Promise<void>;
}

const FENCE_TIMEOUT_MS = 30_000;
const FETCH_ROWS = 1000;
/** Table names come from the catalogue; quoted anyway. */
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Opens the snapshot under the fence and runs `atCut` (recording refs) before the fence lifts.
 */
export async function openSnapshot(
  config: { databaseUrl: string | null; dataDir: string },
  atCut: (snapshot: Snapshot) => Promise<void>,
): Promise<Snapshot> {
  return config.databaseUrl
    ? postgresSnapshot(config.databaseUrl, atCut)
    : sqliteSnapshot(path.join(config.dataDir, 'kiln.sqlite3'), atCut);
}

async function sqliteSnapshot(file: string, atCut: (s: Snapshot) => Promise<void>): Promise<Snapshot> {
  let fence: SQLite.Database;
  let reader: SQLite.Database;
  try {
    fence = new SQLite(file, { fileMustExist: true });
    reader = new SQLite(file, { fileMustExist: true, readonly: true });
  } catch (err) {
    throw new BackupError(`cannot open the SQLite database ${file}: ${(err as Error).message}`);
  }
  fence.pragma(`busy_timeout = ${FENCE_TIMEOUT_MS}`);
  reader.pragma(`busy_timeout = ${FENCE_TIMEOUT_MS}`);
  const snapshot: Snapshot = {
    engine: 'sqlite',
    tables: async () => (reader.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
      .all() as { name: string }[]).map((r) => r.name),
    dump: async (table) => {
      const stmt = reader.prepare(`select * from ${ident(table)} order by rowid`).raw(true);
      const columns = stmt.columns().map((c) => c.name);
      return { columns, rows: (async function* () { for (const row of stmt.iterate()) yield row as unknown[]; })() };
    },
    query: async <T>(text: string) => reader.prepare(text).all() as T[],
    close: async () => {
      if (reader.inTransaction) reader.exec('rollback');
      reader.close();
    },
  };
  try {
    fence.exec('begin immediate');
    reader.exec('begin');
    // The read transaction's snapshot is fixed by its first read, made while the fence holds.
    reader.prepare('select count(*) from sqlite_master').get();
    await atCut(snapshot);
  } catch (err) {
    await snapshot.close();
    throw err;
  } finally {
    if (fence.inTransaction) fence.exec('rollback');
    fence.close();
  }
  return snapshot;
}

/**
 * The fence's locks are asked for with a wait shorter than PostgreSQL's deadlock_timeout (1 s by
 * default): a server transaction that holds one container table and wants another the fence holds
 * would otherwise deadlock with it, and PostgreSQL might end the server's transaction. The fence
 * gives up first, lets it finish, and tries again.
 */
const FENCE_ATTEMPT_MS = 500;
const FENCE_ATTEMPTS = Math.ceil(FENCE_TIMEOUT_MS / FENCE_ATTEMPT_MS);

async function takeFence(fence: pg.Client): Promise<void> {
  const present = (await fence.query<{ t: string }>(
    'select table_name as t from information_schema.tables where table_schema = current_schema() and table_name = any($1)',
    [CONTAINER_TABLES],
  )).rows.map((r) => r.t);
  for (let attempt = 1; ; attempt += 1) {
    await fence.query('begin');
    await fence.query(`set local lock_timeout = '${FENCE_ATTEMPT_MS}ms'`);
    try {
      if (present.length > 0) await fence.query(`lock table ${present.map(ident).join(', ')} in exclusive mode`);
      return;
    } catch (err) {
      await fence.query('rollback');
      // 55P03 lock_not_available: the lock wait ran out.
      if ((err as { code?: string }).code !== '55P03' || attempt >= FENCE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
    }
  }
}

/** Tables whose rows are the containers of repositories (projects, snippets, group wikis). */
const CONTAINER_TABLES = ['projects', 'snippets', 'namespaces'];

async function postgresSnapshot(url: string, atCut: (s: Snapshot) => Promise<void>): Promise<Snapshot> {
  const fence = new pg.Client({ connectionString: url });
  const reader = new pg.Client({ connectionString: url });
  try {
    await fence.connect();
    await reader.connect();
  } catch (err) {
    await Promise.allSettled([fence.end(), reader.end()]);
    throw new BackupError(`cannot connect to PostgreSQL: ${(err as Error).message}`);
  }
  let cursors = 0;
  const snapshot: Snapshot = {
    engine: 'postgres',
    tables: async () => (await reader.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = current_schema() "
      + "and table_type = 'BASE TABLE' order by 1",
    )).rows.map((r) => r.name),
    dump: async (table) => {
      const cursor = `kiln_backup_${cursors += 1}`;
      await reader.query(`declare ${cursor} no scroll cursor for select * from ${ident(table)} order by 1`);
      const first = await reader.query({ text: `fetch ${FETCH_ROWS} from ${cursor}`, rowMode: 'array' });
      const columns = first.fields.map((f) => f.name);
      return {
        columns,
        rows: (async function* () {
          let batch = first.rows as unknown[][];
          while (batch.length > 0) {
            yield* batch;
            if (batch.length < FETCH_ROWS) break;
            const next = await reader.query({ text: `fetch ${FETCH_ROWS} from ${cursor}`, rowMode: 'array' });
            batch = next.rows as unknown[][];
          }
          await reader.query(`close ${cursor}`);
        })(),
      };
    },
    query: async <T>(text: string) => (await reader.query(text)).rows as T[],
    close: async () => {
      await reader.query('rollback').catch(() => {});
      await reader.end();
    },
  };
  try {
    await takeFence(fence);
    await reader.query('begin isolation level repeatable read read only');
    // The snapshot is taken by the transaction's first statement, made while the fence holds.
    await reader.query('select 1');
    await atCut(snapshot);
    await fence.query('commit');
  } catch (err) {
    await fence.query('rollback').catch(() => {});
    await snapshot.close().catch(() => {});
    throw err instanceof BackupError ? err : new BackupError(`taking the database snapshot failed: ${(err as Error).message}`);
  } finally {
    await fence.end();
  }
  return snapshot;
}
