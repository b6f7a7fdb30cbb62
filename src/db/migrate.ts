/**
 * Runs the dated migrations in src/db/migrations (files named YYYY-MM-DDTHHMM_<change>.ts, so
 * name order is execution order). Used by `kiln migrate`, by `npm start`, and by the tests.
 */
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
  if (await upToDate(db)) return { results: [] };
  const migrator = new Migrator({ db, provider: new DatedFileProvider() });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
