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

class DatedFileProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => MIGRATION_FILE.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href);
    }
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: new DatedFileProvider() });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
