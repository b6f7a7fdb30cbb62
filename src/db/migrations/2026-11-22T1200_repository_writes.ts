/**
 * Git writes in progress (issue 7): one row per push that is running, by container, so that
 * scheduling a storage move on any server process can refuse a container that a push on any
 * other process is still writing to (the Service's `git_transfer_in_progress?`, reference §4).
 *
 * A row is taken in the transaction that checks the container is not read-only and removed when
 * the push ends. `expires_at` is when the row stops counting even if it was never removed (its
 * process crashed): the pushing process's time limit for a push plus a grace period, so a row
 * that still counts always belongs to a push that may still be writing. No foreign key: the row
 * outlives nothing, and a container deleted mid-push must not block on it.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('repository_writes'))
    .addColumn('container_type', 'text', (c) => c.notNull())
    .addColumn('container_id', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .execute();
  // Scheduling asks "any unexpired write on this container?"; a push clears expired ones there.
  await db.schema.createIndex('repository_writes_container').on('repository_writes')
    .columns(['container_type', 'container_id', 'expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('repository_writes').execute();
}
