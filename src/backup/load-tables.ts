/**
 * Loads a backup's table dumps into a database that the migrations have just built (empty apart
 * from what they seed, which the backup's rows replace).
 *
 * While loading, what the schema would do on its own to each inserted row is held off, because
 * the rows already are its result: triggers that keep derived rows and counters (email claims,
 * child paths, topic and open-issue counts) and foreign-key checks between tables loaded in name
 * order. SQLite: triggers are dropped and made again from their recorded SQL in the same
 * transaction, foreign keys checked once at the end (foreign_key_check). PostgreSQL: triggers
 * disabled per table (ALTER TABLE … DISABLE TRIGGER USER, which the tables' owner may do), foreign
 * keys made DEFERRABLE and deferred to the commit, then NOT DEFERRABLE again. Then each serial
 * column's sequence is set past the largest id, so new rows never take a restored one's.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { BackupError, EXIT, decodeValue } from './format.ts';

/** SQLite allows 32766 bound parameters a statement; PostgreSQL 65535. */
const MAX_PARAMS = 30_000;

export async function loadTables(database: Database, work: string, tables: string[], say: (l: string) => void): Promise<void> {
  const db = database.db as unknown as Kysely<any>;
  if (database.dialect === 'sqlite') await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      const restoreSchema = database.dialect === 'sqlite' ? await holdSqlite(trx) : await holdPostgres(trx);
      for (const [i, table] of tables.entries()) {
        say(`database: loading ${i + 1}/${tables.length} ${table}`);
        await sql`delete from ${sql.table(table)}`.execute(trx);
        await loadTable(trx, path.join(work, 'database', `${table}.jsonl`), table);
      }
      await restoreSchema();
      if (database.dialect === 'postgres') await resetSequences(trx);
    });
  } finally {
    if (database.dialect === 'sqlite') await sql`pragma foreign_keys = on`.execute(db);
  }
  if (database.dialect === 'sqlite') {
    const broken = await sql<{ table: string }>`pragma foreign_key_check`.execute(db);
    if (broken.rows.length > 0) {
      throw new BackupError(`the restored rows break ${broken.rows.length} foreign keys (first in ${broken.rows[0].table}): the backup is inconsistent`, EXIT.corrupt);
    }
  }
}

async function loadTable(trx: Transaction<any>, file: string, table: string): Promise<void> {
  if (!fs.existsSync(file)) throw new BackupError(`the archive has no dump of table ${table}`, EXIT.corrupt);
  const lines = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let columns: string[] | null = null;
  let batch: Record<string, unknown>[] = [];
  let perBatch = 1;
  const flush = async () => {
    if (batch.length > 0) await trx.insertInto(table).values(batch).execute();
    batch = [];
  };
  for await (const line of lines) {
    if (line === '') continue;
    if (columns === null) {
      const header = JSON.parse(line) as { table: string; columns: string[] };
      if (header.table !== table || !Array.isArray(header.columns)) throw new BackupError(`the dump of ${table} has a wrong header`, EXIT.corrupt);
      columns = header.columns;
      perBatch = Math.max(1, Math.floor(MAX_PARAMS / Math.max(1, columns.length)));
      continue;
    }
    const values = JSON.parse(line) as unknown[];
    const row: Record<string, unknown> = {};
    columns.forEach((c, i) => { row[c] = decodeValue(values[i]); });
    batch.push(row);
    if (batch.length >= perBatch) await flush();
  }
  await flush();
}

/** Drops SQLite's triggers; the returned function makes them again. */
async function holdSqlite(trx: Transaction<any>): Promise<() => Promise<void>> {
  const triggers = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'trigger'`.execute(trx)).rows;
  for (const t of triggers) await sql`drop trigger ${sql.id(t.name)}`.execute(trx);
  return async () => {
    for (const t of triggers) await sql.raw(t.sql).execute(trx);
  };
}

async function holdPostgres(trx: Transaction<any>): Promise<() => Promise<void>> {
  const tables = (await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(trx)).rows.map((r) => r.name);
  const fks = (await sql<{ table: string; name: string }>`select c.conrelid::regclass::text as table, c.conname as name
    from pg_constraint c join pg_namespace n on n.oid = c.connamespace
    where c.contype = 'f' and n.nspname = current_schema() and not c.condeferrable`.execute(trx)).rows;
  for (const t of tables) await sql`alter table ${sql.table(t)} disable trigger user`.execute(trx);
  for (const fk of fks) await sql`alter table ${sql.raw(fk.table)} alter constraint ${sql.id(fk.name)} deferrable initially deferred`.execute(trx);
  return async () => {
    // The deferred checks run now, before the constraints are made immediate again.
    await sql`set constraints all immediate`.execute(trx);
    for (const fk of fks) await sql`alter table ${sql.raw(fk.table)} alter constraint ${sql.id(fk.name)} not deferrable`.execute(trx);
    for (const t of tables) await sql`alter table ${sql.table(t)} enable trigger user`.execute(trx);
  };
}

async function resetSequences(trx: Transaction<any>): Promise<void> {
  const serials = (await sql<{ table: string; column: string }>`select table_name as table, column_name as column
    from information_schema.columns where table_schema = current_schema() and column_default like 'nextval(%'`.execute(trx)).rows;
  for (const s of serials) {
    await sql`select setval(pg_get_serial_sequence(${s.table}, ${s.column}),
      coalesce((select max(${sql.id(s.column)}) from ${sql.table(s.table)}), 0) + 1, false)`.execute(trx);
  }
}
