/**
 * Migrations and first-boot set-up, and what a first boot prints. The KILN_WORKERS primary runs
 * them alone before it starts the server processes (cluster/workers.ts), without loading the app.
 */
import type { Config } from './config/schema.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { bootstrapInstance } from './domain/instance/bootstrap.ts';
import { ensureRegistrationToken } from './domain/runners/registration-token.ts';

/** Prints what a first boot generated, once: the runner registration token and root's password. */
export async function announceFirstBoot(database: Database, config: Config, generatedRootPassword: string | null): Promise<void> {
  const runnerToken = await ensureRegistrationToken(database.db, config.runnerRegistrationToken);
  if (runnerToken) {
    // Printed once, on the boot that generated it (CONTRACT §2: KILN_RUNNER_REGISTRATION_TOKEN).
    process.stdout.write(`kiln: runner registration token ${runnerToken}\n`);
  }
  if (generatedRootPassword) {
    // Printed once, on the boot that created root, so the operator can sign in.
    process.stdout.write(`kiln: created root with password ${generatedRootPassword}\n`);
  }
}

/**
 * Migrations and first-boot set-up alone: the KILN_WORKERS primary runs them once before it
 * starts the server processes (cluster/workers.ts).
 */
export async function prepareInstance(config: Config): Promise<void> {
  const database = openDatabase(config);
  try {
    await migrateToLatest(database.db);
    const boot = await bootstrapInstance(database.db, {
      rootPassword: config.rootPassword, rootToken: config.rootToken, dialect: database.dialect,
    });
    await announceFirstBoot(database, config, boot.generatedRootPassword);
  } finally {
    await database.close();
  }
}

