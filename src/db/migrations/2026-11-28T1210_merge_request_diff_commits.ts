/**
 * The commits of each diff version of a merge request (the Service's merge_request_diff_commits),
 * newest first: what finds the merge requests that hold a commit
 * (GET /projects/:id/repository/commits/:sha/merge_requests, MergeRequest.by_commit_sha) without
 * asking git about every request. Versions recorded before this table have none; the next push to
 * their source branch records a version with its commits.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('merge_request_diff_commits'))
    .addColumn('merge_request_diff_id', 'integer', (c) => c.notNull().references('merge_request_diffs.id').onDelete('cascade'))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('relative_order', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_request_diff_commits_diff_order').on('merge_request_diff_commits')
    .columns(['merge_request_diff_id', 'relative_order']).unique().execute();
  await db.schema.createIndex('merge_request_diff_commits_sha').on('merge_request_diff_commits')
    .columns(['sha', 'merge_request_diff_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('merge_request_diff_commits').execute();
}
