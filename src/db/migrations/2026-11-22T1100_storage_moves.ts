/**
 * Background jobs (DESIGN, Stack: "a `background_jobs` table claimed atomically, leases with
 * expiry, in-process workers on every node") and the repository storage moves of projects,
 * snippets and groups (reference §4).
 *
 * A job is `queued` until a worker claims it (`running`, with `lease_owner` and
 * `lease_expires_at`); a lease that expires without the job finishing belongs to a crashed or
 * stalled worker, and the job is claimable again. Finished jobs are deleted; a job that used up
 * its attempts stays as `dead` with its last error.
 *
 * Moves store the Service's integer states (initial=1 … cleanup_failed=7). A partial unique index
 * allows one active move (initial, scheduled, started, replicated) per container, so two bulk
 * requests for the same shard can never move one repository twice at once.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

const MOVE_TABLES = [
  { table: 'project_repository_storage_moves', fk: 'project_id', references: 'projects.id' },
  { table: 'snippet_repository_storage_moves', fk: 'snippet_id', references: 'snippets.id' },
  { table: 'group_repository_storage_moves', fk: 'group_id', references: 'namespaces.id' },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('background_jobs'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(5))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The two halves of the claim query: due queued jobs, and running jobs whose lease expired.
  await db.schema.createIndex('background_jobs_queued').on('background_jobs').columns(['state', 'run_at', 'id']).execute();
  await db.schema.createIndex('background_jobs_leases').on('background_jobs').columns(['state', 'lease_expires_at', 'id']).execute();

  for (const m of MOVE_TABLES) {
    await withId(db, db.schema.createTable(m.table))
      .addColumn(m.fk, 'integer', (c) => c.notNull().references(m.references).onDelete('cascade'))
      .addColumn('state', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('source_storage_name', 'text', (c) => c.notNull())
      .addColumn('destination_storage_name', 'text', (c) => c.notNull())
      .addColumn('error_message', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // GET lists: created_at desc (id breaks ties), globally and per container.
    await db.schema.createIndex(`${m.table}_created_at`).on(m.table).columns(['created_at', 'id']).execute();
    await db.schema.createIndex(`${m.table}_container`).on(m.table).columns([m.fk, 'created_at', 'id']).execute();
    await sql`create unique index ${sql.raw(`${m.table}_one_active`)} on ${sql.table(m.table)} (${sql.ref(m.fk)}) where state in (1, 2, 3, 6)`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const m of MOVE_TABLES) await db.schema.dropTable(m.table).execute();
  await db.schema.dropTable('background_jobs').execute();
}
