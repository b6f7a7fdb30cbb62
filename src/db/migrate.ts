/**
 * Runs the dated migrations in src/db/migrations (files named YYYY-MM-DDTHHMM_<change>.ts, so
 * name order is execution order). Used by `kiln migrate`, by `npm start`, and by the tests.
 *
 * Safe upgrades (issue 34, item 3): the database remembers each applied migration's SHA-256 in
 * kiln_migration_checksums, and every boot compares the files on disk with it before anything
 * else. An applied migration edited afterwards means the schema is not what the code believes,
 * so kiln stops with a message naming the file instead of serving on a database it cannot trust.
 * A database written before checksums were kept has its applied migrations recorded as they are
 * on first boot.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely/migration';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_FILE = /^\d{4}-\d{2}-\d{2}T\d{4}_[a-z0-9_]+\.ts$/;

async function migrationFiles(): Promise<string[]> {
  return (await fs.readdir(MIGRATIONS_DIR)).filter((f) => MIGRATION_FILE.test(f)).sort();
}

/** An applied migration whose file no longer matches what ran. */
export class MigrationChecksumError extends Error {
  readonly migrations: string[];
  constructor(edited: { name: string; recorded: string; current: string }[]) {
    super(edited.map((e) => `migration ${e.name} was edited after it was applied (sha256 ${e.recorded.slice(0, 12)}… when applied, `
      + `${e.current.slice(0, 12)}… now): restore ${e.name}.ts as it was; a change to the schema goes in a new migration`).join('\n'));
    this.name = 'MigrationChecksumError';
    this.migrations = edited.map((e) => e.name);
  }
}

/** Each migration file's SHA-256 (hex), by migration name. */
export async function migrationChecksums(): Promise<Map<string, string>> {
  const files = await migrationFiles();
  const sha256 = async (f: string) => crypto.createHash('sha256').update(await fs.readFile(path.join(MIGRATIONS_DIR, f))).digest('hex');
  const sums = await Promise.all(files.map(sha256));
  return new Map(files.map((f, i) => [f.replace(/\.ts$/, ''), sums[i]]));
}

const CHECKSUMS = 'kiln_migration_checksums';

async function recordedChecksums(db: Kysely<any>): Promise<Map<string, string>> {
  try {
    const rows = await db.selectFrom(CHECKSUMS).select(['name', 'sha256']).execute();
    return new Map(rows.map((r: { name: string; sha256: string }) => [r.name, r.sha256]));
  } catch {
    await db.schema.createTable(CHECKSUMS).ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('recorded_at', 'text', (c) => c.notNull())
      .execute();
    return new Map();
  }
}

async function appliedMigrations(db: Kysely<any>): Promise<string[] | null> {
  try {
    return (await db.selectFrom('kysely_migration').select('name').execute()).map((r: { name: string }) => r.name);
  } catch {
    return null;
  }
}

/**
 * Compares the applied migrations with their files; throws MigrationChecksumError for edited ones.
 * Returns the applied migrations that have no checksum yet.
 */
export async function verifyMigrationChecksums(db: Kysely<any>, sums: Map<string, string>): Promise<string[]> {
  const applied = await appliedMigrations(db);
  if (applied === null) return [];
  const recorded = await recordedChecksums(db);
  const edited = [];
  const unrecorded = [];
  for (const name of applied) {
    const was = recorded.get(name);
    const now = sums.get(name);
    // A migration applied but missing on disk is the migrator's to report.
    if (now === undefined) continue;
    if (was === undefined) unrecorded.push(name);
    else if (was !== now) edited.push({ name, recorded: was, current: now });
  }
  if (edited.length > 0) throw new MigrationChecksumError(edited);
  return unrecorded;
}

async function recordChecksums(db: Kysely<any>, sums: Map<string, string>, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await recordedChecksums(db);
  const now = new Date().toISOString();
  // Several processes may boot at once: the first to record a migration's sum wins, the same sum.
  await db.insertInto(CHECKSUMS).values(names.map((name) => ({ name, sha256: sums.get(name)!, recorded_at: now })))
    .onConflict((oc) => oc.column('name').doNothing()).execute();
}

class DatedFileProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = await migrationFiles();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href);
    }
    return migrations;
  }
}

/**
 * Whether the database has run exactly the migrations on disk. Kysely's migrator imports every
 * migration module to find out, which on each boot of an up-to-date database cost 50–70 ms and
 * the modules' memory (issue 17, item 5); its own table answers the same question. Anything else
 * (no table yet, a migration missing on either side) goes to the migrator, which migrates or
 * says what is wrong.
 */
async function upToDate(db: Kysely<any>): Promise<boolean> {
  const names = (await migrationFiles()).map((f) => f.replace(/\.ts$/, ''));
  let done: { name: string }[];
  try {
    done = await db.selectFrom('kysely_migration').select('name').execute();
  } catch {
    return false;
  }
  const recorded = new Set(done.map((r) => r.name));
  return done.length === names.length && names.every((n) => recorded.has(n));
}

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const sums = await migrationChecksums();
  const unrecorded = await verifyMigrationChecksums(db, sums);
  if (await upToDate(db)) {
    await recordChecksums(db, sums, unrecorded);
    return { results: [] };
  }
  const migrator = new Migrator({ db, provider: new DatedFileProvider() });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  const ran = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  await recordChecksums(db, sums, [...unrecorded, ...ran]);
  return result;
}

/** The names of the migrations this kiln has, in the order they run. */
export async function knownMigrations(): Promise<string[]> {
  return (await migrationFiles()).map((f) => f.replace(/\.ts$/, ''));
}

/**
 * Runs the migrations up to and including `name` (a restore loads a backup's rows into the schema
 * they were written in, then migrates to the latest like any older database).
 */
export async function migrateUpTo(db: Kysely<any>, name: string): Promise<MigrationResultSet> {
  const sums = await migrationChecksums();
  const migrator = new Migrator({ db, provider: new DatedFileProvider() });
  const result = await migrator.migrateTo(name);
  if (result.error) throw result.error;
  await recordChecksums(db, sums, (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName));
  return result;
}
