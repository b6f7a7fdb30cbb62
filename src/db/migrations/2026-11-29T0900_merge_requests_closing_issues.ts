/**
 * The issues an open merge request closes on merge (the Service's merge_requests_closing_issues,
 * written by MergeRequest#cache_merge_request_closes_issues!): the issue entity's
 * `merge_requests_count` counts them. One row per pair, by constraint; `issue_id` indexed for
 * that count. Open requests written before this migration are read once here with the closing
 * pattern as it stands today (frozen with this migration, like the migration itself).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

const CLOSING = /\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?):?\s+(?:issues?\s+)?((?:#\d+(?:\s*,?\s+and\s+|\s*,?\s*)?)+)/gi;

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('merge_requests_closing_issues'))
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_requests_closing_issues_pair').on('merge_requests_closing_issues')
    .columns(['merge_request_id', 'issue_id']).unique().execute();
  await db.schema.createIndex('merge_requests_closing_issues_issue').on('merge_requests_closing_issues').column('issue_id').execute();

  const open = await db.selectFrom('merge_requests').select(['id', 'project_id', 'description'])
    .where('state', 'in', ['opened', 'locked']).where('description', 'like', '%#%').execute();
  const now = new Date().toISOString();
  for (const mr of open as { id: number; project_id: number; description: string }[]) {
    const iids = new Set<number>();
    for (const m of mr.description.matchAll(CLOSING)) {
      for (const ref of m[1].matchAll(/#(\d+)/g)) if (ref[1].length <= 10 && Number(ref[1]) <= 2_147_483_647) iids.add(Number(ref[1]));
    }
    if (iids.size === 0) continue;
    const issues = await db.selectFrom('issues').select('id').where('project_id', '=', mr.project_id).where('iid', 'in', [...iids]).execute();
    if (issues.length === 0) continue;
    await db.insertInto('merge_requests_closing_issues')
      .values(issues.map((i: { id: number }) => ({ merge_request_id: mr.id, issue_id: i.id, created_at: now, updated_at: now })))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('merge_requests_closing_issues').execute();
}
