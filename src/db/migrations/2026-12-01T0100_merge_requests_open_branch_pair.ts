/**
 * One open merge request per (source project, source branch, target project, target branch), as
 * MergeRequest#validate_branches of the Service 15.2 has it ("Another open merge request already
 * exists for this source branch: !N" looks for an open request with the same source branch AND
 * target branch from the same source project into the same target). The index of 2026-11-28T1200
 * left out the target branch, so one branch could not be proposed into two target branches at
 * once, which the Service allows. Still a partial unique index (opened or locked: a request being
 * merged is still open), so two concurrent creations cannot both land.
 */
import { sql, type Kysely } from 'kysely';

const OPEN = [sql.lit('opened'), sql.lit('locked')];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('merge_requests_open_branch_pair').on('merge_requests')
    .columns(['project_id', 'source_project_id', 'source_branch', 'target_branch']).unique()
    .where(sql.ref('state'), 'in', OPEN).execute();
  await db.schema.dropIndex('merge_requests_open_source_branch').execute();
}

/**
 * Back to one open request per source branch. Requests opened from one branch into several target
 * branches meanwhile make the old index impossible: the migration then fails on the unique index
 * rather than closing anybody's request.
 */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('merge_requests_open_source_branch').on('merge_requests')
    .columns(['project_id', 'source_project_id', 'source_branch']).unique()
    .where(sql.ref('state'), 'in', OPEN).execute();
  await db.schema.dropIndex('merge_requests_open_branch_pair').execute();
}
