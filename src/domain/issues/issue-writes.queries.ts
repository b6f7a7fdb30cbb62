/**
 * Writes of issues and of what hangs off them (assignees, label links, resource events, user
 * agent details), and the reads the writing operations make inside their transaction: the labels
 * a project may use, the milestones it may take. Called from create-issue.ts, update-issue.ts
 * and delete-issue.ts only.
 */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow, IssuesTable } from '../../db/tables/issues.ts';
import type { LabelRow, MilestoneRow } from '../../db/tables/labels.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Where an issue's labels and milestones may come from: its project and the groups above it. */
export interface LabelOwners {
  projectId: number;
  /** The project's namespace and its ancestors when they are groups (empty for a personal project). */
  groupIds: readonly number[];
}

/** Labels available to the project with these titles: its own and its ancestor groups' (LabelsFinder include_ancestor_groups). */
export function availableLabelsByTitle(db: Db, owners: LabelOwners, titles: readonly string[]): Promise<LabelRow[]> {
  if (titles.length === 0) return Promise.resolve([]);
  return db.selectFrom('labels').selectAll().where('title', 'in', [...titles]).where((eb) => eb.or([
    eb('project_id', '=', owners.projectId),
    ...(owners.groupIds.length > 0 ? [eb('group_id', 'in', [...owners.groupIds])] : []),
  ])).orderBy('id').execute();
}

/** Creates project labels for these titles; a title another request created meanwhile is left as it is. */
export async function insertProjectLabels(trx: Transaction<DB>, projectId: number, titles: readonly string[], color: string, now: string) {
  if (titles.length === 0) return;
  await trx.insertInto('labels').values(titles.map((title) => ({
    project_id: projectId, group_id: null, title, color, description: null, created_at: now, updated_at: now,
  }))).onConflict((oc) => oc.columns(['project_id', 'title']).where('project_id', 'is not', null).doNothing()).execute();
}

/** The milestone if it is the project's or one of its ancestor groups' (Milestone.for_projects_and_groups). */
export function availableMilestone(db: Db, owners: LabelOwners, id: number): Promise<MilestoneRow | undefined> {
  return db.selectFrom('milestones').selectAll().where('id', '=', id).where((eb) => eb.or([
    eb('project_id', '=', owners.projectId),
    ...(owners.groupIds.length > 0 ? [eb('group_id', 'in', [...owners.groupIds])] : []),
  ])).executeTakeFirst();
}

export type NewIssue = Insertable<IssuesTable>;
export type IssueUpdate = Updateable<IssuesTable>;

export function insertIssue(trx: Transaction<DB>, values: NewIssue): Promise<IssueRow> {
  return trx.insertInto('issues').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateIssueRow(trx: Transaction<DB>, id: number, set: IssueUpdate): Promise<IssueRow> {
  return trx.updateTable('issues').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteIssueRow(trx: Transaction<DB>, id: number): Promise<void> {
  // Rows that name the issue without a foreign key (polymorphic targets) go with it.
  await trx.deleteFrom('label_links').where('target_type', '=', 'Issue').where('target_id', '=', id).execute();
  await trx.deleteFrom('notes').where('noteable_type', '=', 'Issue').where('noteable_id', '=', id).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Issue').where('awardable_id', '=', id).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Issue').where('subscribable_id', '=', id).execute();
  await trx.deleteFrom('todos').where('target_type', '=', 'Issue').where('target_id', '=', id).execute();
  await trx.deleteFrom('user_agent_details').where('subject_type', '=', 'Issue').where('subject_id', '=', id).execute();
  await trx.deleteFrom('issues').where('id', '=', id).execute();
}

export async function replaceAssignees(trx: Transaction<DB>, issueId: number, userIds: readonly number[]): Promise<void> {
  await trx.deleteFrom('issue_assignees').where('issue_id', '=', issueId).execute();
  if (userIds.length === 0) return;
  await trx.insertInto('issue_assignees').values(userIds.map((user_id) => ({ issue_id: issueId, user_id }))).execute();
}

export async function linkLabels(trx: Transaction<DB>, issueId: number, labelIds: readonly number[], now: string): Promise<void> {
  if (labelIds.length === 0) return;
  await trx.insertInto('label_links').values(labelIds.map((label_id) => ({
    label_id, target_type: 'Issue', target_id: issueId, created_at: now, updated_at: now,
  }))).onConflict((oc) => oc.columns(['target_type', 'target_id', 'label_id']).doNothing()).execute();
}

export async function unlinkLabels(trx: Transaction<DB>, issueId: number, labelIds: readonly number[]): Promise<void> {
  if (labelIds.length === 0) return;
  await trx.deleteFrom('label_links').where('target_type', '=', 'Issue').where('target_id', '=', issueId)
    .where('label_id', 'in', [...labelIds]).execute();
}

export async function recordLabelEvents(
  trx: Transaction<DB>, issueId: number, userId: number, changes: { added: readonly number[]; removed: readonly number[] }, now: string,
): Promise<void> {
  const rows = [
    ...changes.added.map((label_id) => ({ label_id, action: 'add' })),
    ...changes.removed.map((label_id) => ({ label_id, action: 'remove' })),
  ].map((r) => ({ ...r, issue_id: issueId, merge_request_id: null, user_id: userId, created_at: now }));
  if (rows.length > 0) await trx.insertInto('resource_label_events').values(rows).execute();
}

/**
 * A milestone added to or removed from an issue (ResourceEvents::ChangeMilestoneService): the
 * milestone it names (the old one on removal) and the issue's state at the time, as the Service
 * records `state` from the resource.
 */
export async function recordMilestoneEvent(
  trx: Transaction<DB>, issueId: number, userId: number,
  e: { milestoneId: number; action: 'add' | 'remove'; issueState: string }, now: string,
): Promise<void> {
  await trx.insertInto('resource_milestone_events').values({
    issue_id: issueId, merge_request_id: null, milestone_id: e.milestoneId, user_id: userId, action: e.action, state: e.issueState,
    created_at: now,
  }).execute();
}

/** The user's pending todos on the issue are done once they close it (TodoService#close_issue). */
export async function resolveTodosOf(trx: Transaction<DB>, issueId: number, userId: number, now: string): Promise<void> {
  await trx.updateTable('todos').set({ state: 'done', updated_at: now }).where('target_type', '=', 'Issue').where('target_id', '=', issueId)
    .where('user_id', '=', userId).where('state', '=', 'pending').execute();
}

export async function recordStateEvent(trx: Transaction<DB>, issueId: number, userId: number, state: string, now: string): Promise<void> {
  await trx.insertInto('resource_state_events').values({
    issue_id: issueId, merge_request_id: null, user_id: userId, state, source_commit: null, source_merge_request_id: null, created_at: now,
  }).execute();
}

export function labelIdsOfIssue(db: Db, issueId: number): Promise<number[]> {
  return db.selectFrom('label_links').select('label_id').where('target_type', '=', 'Issue').where('target_id', '=', issueId)
    .execute().then((rows) => rows.map((r) => r.label_id));
}

export function labelsByIds(db: Db, ids: readonly number[]): Promise<LabelRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('labels').selectAll().where('id', 'in', [...ids]).execute();
}

export function findMilestoneById(db: Db, id: number): Promise<MilestoneRow | undefined> {
  return db.selectFrom('milestones').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Soft-deleted users' issues stay, written by the ghost user (Users::MigrateToGhostUserService). */
export async function reassignIssues(trx: Transaction<DB>, fromUserId: number, toUserId: number): Promise<void> {
  await trx.updateTable('issues').set({ author_id: toUserId }).where('author_id', '=', fromUserId).execute();
  await trx.updateTable('issues').set({ closed_by_id: toUserId }).where('closed_by_id', '=', fromUserId).execute();
}

/** Lower-case usernames to users that are active (mentions of blocked or unknown names create nothing). */
export function activeUsersByUsernames(db: Db, usernames: readonly string[]) {
  if (usernames.length === 0) return Promise.resolve([]);
  return db.selectFrom('users').selectAll().where(sql<string>`lower(username)`, 'in', [...usernames]).where('state', '=', 'active').execute();
}
