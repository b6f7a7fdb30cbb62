/**
 * Internal ids (issue 35, item 1): the per-project and per-group sequences (pipeline `iid` now;
 * issue, merge request and milestone iids as those areas land) come from one counter row per
 * (scope, usage), advanced inside the transaction that creates the numbered row, as the
 * Service's `internal_ids` table does. Reading max(iid) + 1 instead let two pipelines created at
 * once (an API call and a push) take the same number, and the second broke
 * ci_pipelines_project_iid.
 *
 * A row's scope is a project or a namespace (a group's milestones, say), never both; each scope
 * takes its usage once, kept by a unique index per scope column (partial, so the other scope's
 * NULLs do not take part), which is also the conflict target of the allocating upsert. Removing a
 * project or group removes its counters with it. `usage` is text naming the numbered rows
 * ('ci_pipelines', later 'issues', 'merge_requests', 'milestones'); the list lives in
 * src/domain/internal-ids/internal-ids.queries.ts.
 *
 * Existing pipelines seed their project's counter with their greatest iid, so the next pipeline
 * follows on from them.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('internal_ids'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('namespace_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('usage', 'text', (c) => c.notNull())
    .addColumn('last_value', 'integer', (c) => c.notNull())
    .addCheckConstraint('internal_ids_one_scope', sql`(project_id is null) <> (namespace_id is null)`)
    .execute();
  await db.schema.createIndex('internal_ids_project_usage').on('internal_ids').columns(['project_id', 'usage']).unique()
    .where('project_id', 'is not', null).execute();
  await db.schema.createIndex('internal_ids_namespace_usage').on('internal_ids').columns(['namespace_id', 'usage']).unique()
    .where('namespace_id', 'is not', null).execute();
  await db.insertInto('internal_ids').columns(['project_id', 'usage', 'last_value'])
    .expression((eb: any) => eb.selectFrom('ci_pipelines')
      .select(['project_id', sql.lit('ci_pipelines').as('usage'), eb.fn.max('iid').as('last_value')]).groupBy('project_id'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('internal_ids').execute();
}
