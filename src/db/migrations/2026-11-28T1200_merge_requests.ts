/**
 * Merge requests (issue 30, item 1) on the collaboration core of 2026-11-27T1000: the request
 * itself, its assignees, reviewers and approvals, and its diff versions (the Service's
 * merge_request_diffs: one per push to the source branch, with the base, start and head commits
 * the diff was taken between). Notes, award emoji, label links, todos, subscriptions, events,
 * resource events and time logs already name merge requests by 'MergeRequest' / merge_request_id.
 *
 * Uniqueness rules, as indexes:
 * - an iid once per target project (allocated by internal_ids, usage 'merge_requests');
 * - one open (or locked) merge request per source branch of a source project into a target
 *   project (MergeRequest#validate_branches: "Another open merge request already exists for
 *   this source branch"), a partial unique index so two concurrent creations cannot both land;
 * - a user once among a request's assignees, reviewers and approvers;
 * - a diff version's head once per request (a push that does not move the head adds none).
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('merge_requests'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    // The target project: the request is listed, numbered and merged there.
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('source_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('source_branch', 'text', (c) => c.notNull())
    .addColumn('target_branch', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // 'opened' | 'closed' | 'merged' | 'locked'.
    .addColumn('state', 'text', (c) => c.notNull())
    // 'unchecked' | 'checking' | 'can_be_merged' | 'cannot_be_merged' | 'cannot_be_merged_recheck'.
    .addColumn('merge_status', 'text', (c) => c.notNull())
    .addColumn('draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('squash', 'integer', (c) => c.notNull().defaultTo(0))
    // merge_params force_remove_source_branch: null when never chosen.
    .addColumn('force_remove_source_branch', 'integer')
    .addColumn('should_remove_source_branch', 'integer')
    .addColumn('merge_when_pipeline_succeeds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('merge_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    // JSON: what the merge was asked with (commit messages, sha) while it waits for a pipeline.
    .addColumn('merge_params', 'text')
    .addColumn('merge_commit_sha', 'text')
    .addColumn('squash_commit_sha', 'text')
    .addColumn('merge_error', 'text')
    .addColumn('merged_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('merged_at', 'text')
    .addColumn('closed_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('closed_at', 'text')
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('discussion_locked', 'integer')
    .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rebase_in_progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rebase_commit_sha', 'text')
    // The merge commit of refs/merge-requests/:iid/merge, written by the merge status check.
    .addColumn('merge_ref_sha', 'text')
    // Which heads the merge status was computed for ("<source sha> <target sha>").
    .addColumn('merge_status_heads', 'text')
    .addColumn('updated_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('last_edited_at', 'text')
    .addColumn('last_edited_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_requests_project_iid').on('merge_requests').columns(['project_id', 'iid']).unique().execute();
  await db.schema.createIndex('merge_requests_open_source_branch').on('merge_requests')
    .columns(['project_id', 'source_project_id', 'source_branch']).unique()
    .where(sql.ref('state'), 'in', [sql.lit('opened'), sql.lit('locked')]).execute();
  // A project's lists in their orders and by state; the instance's; a branch's requests (push hooks).
  await db.schema.createIndex('merge_requests_project_state_created').on('merge_requests').columns(['project_id', 'state', 'created_at', 'id']).execute();
  await db.schema.createIndex('merge_requests_project_created').on('merge_requests').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('merge_requests_project_updated').on('merge_requests').columns(['project_id', 'updated_at', 'id']).execute();
  await db.schema.createIndex('merge_requests_created').on('merge_requests').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('merge_requests_updated').on('merge_requests').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('merge_requests_author').on('merge_requests').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('merge_requests_milestone').on('merge_requests').columns(['milestone_id']).execute();
  await db.schema.createIndex('merge_requests_source').on('merge_requests').columns(['source_project_id', 'source_branch']).execute();
  await db.schema.createIndex('merge_requests_target').on('merge_requests').columns(['project_id', 'target_branch']).execute();

  for (const table of ['merge_request_assignees', 'merge_request_reviewers', 'approvals']) {
    await db.schema.createTable(table)
      .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['merge_request_id', 'user_id'])
      .execute();
    await db.schema.createIndex(`${table}_user`).on(table).columns(['user_id', 'merge_request_id']).execute();
  }

  await withId(db, db.schema.createTable('merge_request_diffs'))
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('head_commit_sha', 'text', (c) => c.notNull())
    .addColumn('base_commit_sha', 'text')
    .addColumn('start_commit_sha', 'text')
    // 'collected' | 'empty' (no commits between the merge base and the head).
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('real_size', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_request_diffs_request_head').on('merge_request_diffs')
    .columns(['merge_request_id', 'head_commit_sha']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['merge_request_diffs', 'approvals', 'merge_request_reviewers', 'merge_request_assignees', 'merge_requests']) {
    await db.schema.dropTable(table).execute();
  }
}
