/**
 * What the Service's Sidekiq metrics read from Redis, kept for kiln's own job queue: the
 * processes running workers (a row per JobRunner, its heartbeat renewed each minute) and the
 * running totals of processed and failed runs (finished jobs leave background_jobs).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('background_job_workers')
    .addColumn('owner', 'text', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('beat_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('background_job_workers_beat_at').on('background_job_workers').column('beat_at').execute();
  await db.schema.createTable('background_job_counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('background_job_counters').execute();
  await db.schema.dropTable('background_job_workers').execute();
}
