/**
 * The project setting "Public pipelines" (the Service's projects.public_builds, default on): when
 * off, jobs, logs and artifacts are for members (Reporter and up) only, even on a public project.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('public_builds', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('public_builds').execute();
}
