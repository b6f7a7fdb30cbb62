/**
 * Every Kysely call of import and export: the export rows, the records an export reads and the
 * records an import writes (inside the import's one transaction).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { GroupExportRow, ProjectExportRow } from '../../db/tables/import-export.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type Row = Record<string, unknown>;

// ---- export rows ------------------------------------------------------------------------------

export function findProjectExport(db: Db, projectId: number): Promise<ProjectExportRow | undefined> {
  return db.selectFrom('project_exports').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

/** Replaces the project's export with a queued one (the Service removes the old export first). */
export async function replaceProjectExport(
  trx: Transaction<DB>,
  v: { projectId: number; userId: number; description: string | null; uploadUrl: string | null; uploadMethod: string | null },
): Promise<ProjectExportRow> {
  await trx.deleteFrom('project_exports').where('project_id', '=', v.projectId).execute();
  const now = nowIso();
  return trx.insertInto('project_exports').values({
    project_id: v.projectId, user_id: v.userId, status: 'queued', description: v.description, upload_url: v.uploadUrl,
    upload_method: v.uploadMethod, file_name: null, error: null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function setProjectExportState(
  db: Db, id: number, set: { status: string; file_name?: string | null; error?: string | null },
): Promise<void> {
  await db.updateTable('project_exports').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute();
}

export function findProjectExportById(db: Db, id: number): Promise<ProjectExportRow | undefined> {
  return db.selectFrom('project_exports').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findGroupExport(db: Db, groupId: number): Promise<GroupExportRow | undefined> {
  return db.selectFrom('group_exports').selectAll().where('group_id', '=', groupId).executeTakeFirst();
}

export function findGroupExportById(db: Db, id: number): Promise<GroupExportRow | undefined> {
  return db.selectFrom('group_exports').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function replaceGroupExport(trx: Transaction<DB>, groupId: number, userId: number): Promise<GroupExportRow> {
  await trx.deleteFrom('group_exports').where('group_id', '=', groupId).execute();
  const now = nowIso();
  return trx.insertInto('group_exports').values({
    group_id: groupId, user_id: userId, status: 'queued', file_name: null, error: null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function setGroupExportState(db: Db, id: number,
  set: { status: string; file_name?: string | null; error?: string | null }): Promise<void> {
  await db.updateTable('group_exports').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute();
}

// ---- what an export reads ---------------------------------------------------------------------

export interface ProjectRecords {
  labels: Row[];
  milestones: Row[];
  issues: Row[];
  issueAssignees: Row[];
  mergeRequests: Row[];
  mrAssignees: Row[];
  mrReviewers: Row[];
  mrDiffs: Row[];
  mrDiffCommits: Row[];
  labelLinks: Row[];
  notes: Row[];
  awardEmoji: Row[];
  ciVariables: Row[];
  pipelines: Row[];
  members: Row[];
}

export async function readProjectRecords(db: Db, projectId: number): Promise<ProjectRecords> {
  const labels = await db.selectFrom('labels')
    .leftJoin('label_priorities', (j) => j.onRef('label_priorities.label_id', '=', 'labels.id').on('label_priorities.project_id', '=',
      projectId))
    .select(['labels.id', 'labels.title', 'labels.color', 'labels.description', 'labels.created_at', 'labels.updated_at',
      'label_priorities.priority'])
    .where('labels.project_id', '=', projectId).orderBy('labels.id').execute();
  const milestones = await db.selectFrom('milestones').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const issues = await db.selectFrom('issues').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const issueIds = issues.map((i) => i.id);
  const mergeRequests = await db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const mrIds = mergeRequests.map((m) => m.id);
  const some = <T>(ids: number[], q: () => Promise<T[]>): Promise<T[]> => (ids.length === 0 ? Promise.resolve([]) : q());
  const issueAssignees = await some(issueIds, () => db.selectFrom('issue_assignees').selectAll().where('issue_id', 'in',
    issueIds).execute());
  const mrAssignees = await some(mrIds, () => db.selectFrom('merge_request_assignees').selectAll().where('merge_request_id', 'in',
    mrIds).execute());
  const mrReviewers = await some(mrIds, () => db.selectFrom('merge_request_reviewers').selectAll().where('merge_request_id', 'in',
    mrIds).execute());
  const mrDiffs = await some(mrIds, () => db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', 'in',
    mrIds).orderBy('id').execute());
  const diffIds = mrDiffs.map((d) => d.id);
  const mrDiffCommits = await some(diffIds, () => db.selectFrom('merge_request_diff_commits').selectAll()
    .where('merge_request_diff_id', 'in', diffIds).orderBy('merge_request_diff_id').orderBy('relative_order').execute());
  const labelIds = labels.map((l) => l.id);
  const labelLinks = await some(labelIds, () => db.selectFrom('label_links').selectAll().where('label_id', 'in',
    labelIds).orderBy('id').execute());
  const notes = await db.selectFrom('notes').selectAll().where('project_id', '=', projectId)
    .where('noteable_type', 'in', ['Issue', 'MergeRequest']).orderBy('id').execute();
  const noteIds = notes.map((n) => n.id);
  const awardEmoji = [
    ...await some(issueIds, () => db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Issue').where('awardable_id',
      'in', issueIds).execute()),
    ...await some(mrIds, () => db.selectFrom('award_emoji').selectAll().where('awardable_type', '=',
      'MergeRequest').where('awardable_id', 'in', mrIds).execute()),
    ...await some(noteIds, () => db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Note').where('awardable_id',
      'in', noteIds).execute()),
  ].sort((a, b) => a.id - b.id);
  // Values are never exported (the Service leaves them out of its archive too).
  const ciVariables = await db.selectFrom('ci_variables')
    .select(['key', 'variable_type', 'protected', 'masked', 'raw', 'environment_scope', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId).orderBy('id').execute();
  const pipelines = await db.selectFrom('ci_pipelines')
    .select([
      'id', 'iid', 'ref', 'tag', 'sha', 'before_sha', 'source', 'status', 'user_id', 'config_path', 'commit_data', 'yaml_errors',
      'created_at', 'updated_at', 'started_at', 'finished_at', 'duration', 'merge_request_id',
    ])
    .where('project_id', '=', projectId).orderBy('id').execute();
  const members = await db.selectFrom('members').select(['user_id', 'access_level', 'expires_at', 'created_at'])
    .where('source_type', '=', 'Project').where('source_id', '=', projectId).orderBy('id').execute();
  return {
    labels, milestones, issues, issueAssignees, mergeRequests, mrAssignees, mrReviewers, mrDiffs, mrDiffCommits, labelLinks, notes,
    awardEmoji, ciVariables, pipelines, members,
  };
}

/** Who the user ids of an export are: username and e-mail, what an import maps them by. */
export async function userRefs(db: Db, ids: number[]): Promise<{ id: number; username: string; email: string }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('users').select(['id', 'username', 'email']).where('id', 'in', ids).execute();
}

/** Users by username (case-insensitive) and by primary e-mail, for mapping an import's people. */
export async function usersByUsernameOrEmail(db: Db, usernames: string[],
  emails: string[]): Promise<{ id: number; username: string; email: string; state: string }[]> {
  const lowerNames = usernames.map((u) => u.toLowerCase());
  const lowerEmails = emails.map((e) => e.toLowerCase());
  if (lowerNames.length === 0 && lowerEmails.length === 0) return [];
  const out: { id: number; username: string; email: string; state: string }[] = [];
  for (let i = 0; i < Math.max(lowerNames.length, lowerEmails.length); i += 500) {
    const names = lowerNames.slice(i, i + 500);
    const mails = lowerEmails.slice(i, i + 500);
    out.push(...await db.selectFrom('users').select(['id', 'username', 'email', 'state'])
      .where((eb) => eb.or([
        ...(names.length > 0 ? [eb(sql<string>`lower(username)`, 'in', names)] : []),
        ...(mails.length > 0 ? [eb(sql<string>`lower(email)`, 'in', mails)] : []),
      ])).execute());
  }
  return out;
}

export interface GroupRecords {
  labels: Row[];
  milestones: Row[];
  members: Row[];
  children: { id: number; name: string; path: string; description: string; visibility_level: number }[];
}

export async function readGroupRecords(db: Db, groupId: number): Promise<GroupRecords> {
  const labels = await db.selectFrom('labels').select(['title', 'color', 'description', 'created_at', 'updated_at'])
    .where('group_id', '=', groupId).orderBy('id').execute();
  const milestones = await db.selectFrom('milestones')
    .select(['iid', 'title', 'description', 'state', 'due_date', 'start_date', 'created_at', 'updated_at'])
    .where('group_id', '=', groupId).orderBy('id').execute();
  const members = await db.selectFrom('members').select(['user_id', 'access_level', 'expires_at', 'created_at'])
    .where('source_type', '=', 'Namespace').where('source_id', '=', groupId).orderBy('id').execute();
  const children = await db.selectFrom('namespaces').select(['id', 'name', 'path', 'description', 'visibility_level'])
    .where('parent_id', '=', groupId).where('kind', '=', 'group').orderBy('id').limit(1000).execute();
  return { labels, milestones, members, children };
}

// ---- what an import writes --------------------------------------------------------------------

/** Inserts one row and answers its new id. */
export async function insertRecord(trx: Transaction<DB>, table: ImportTable, values: Row): Promise<number> {
  type Insert = { values(v: Row): { returning(c: 'id'): { executeTakeFirstOrThrow(): Promise<{ id: number }> } } };
  const row = await (trx.insertInto(table) as unknown as Insert)
    .values(values).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Inserts rows without an id of their own (assignees, reviewers). */
export async function insertPlain(trx: Transaction<DB>,
  table: 'issue_assignees' | 'merge_request_assignees' | 'merge_request_reviewers' | 'label_priorities', values: Row[]): Promise<void> {
  if (values.length === 0) return;
  await (trx.insertInto(table) as unknown as { values(v: Row[]): { execute(): Promise<unknown> } }).values(values).execute();
}

export type ImportTable = 'labels' | 'milestones' | 'issues' | 'merge_requests' | 'merge_request_diffs' | 'merge_request_diff_commits'
  | 'label_links' | 'notes' | 'award_emoji' | 'ci_variables' | 'ci_pipelines' | 'members';

export async function setProjectImportState(
  db: Db, projectId: number, set: { import_status: string; import_error?: string | null; import_failed_relations?: string | null },
): Promise<void> {
  await db.updateTable('projects').set({ ...set, updated_at: nowIso() }).where('id', '=', projectId).execute();
}

/** A member row exists for the user on the container. */
export async function isMember(db: Db, sourceType: 'Project' | 'Namespace', sourceId: number, userId: number): Promise<boolean> {
  const row = await db.selectFrom('members').select('id').where('source_type', '=', sourceType).where('source_id', '=', sourceId)
    .where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

export function findProjectInNamespaceByPath(db: Db, namespaceId: number, path: string) {
  return db.selectFrom('projects').selectAll().where('namespace_id', '=', namespaceId)
    .where(sql<string>`lower(path)`, '=', path.toLowerCase()).where('pending_delete', '=', 0).executeTakeFirst();
}

/**
 * What an overwritten project hands to the project that replaces it (Projects::OverwriteProjectService
 * with remove_remaining_elements: false: MoveUsersStarProjectsService, MoveAccessService — members
 * and group links —, MoveDeployKeysProjectsService, MoveNotificationSettingsService): each row of
 * `fromId` moves to `toId` unless `toId` has that user, group or key already (the imported
 * members win). Its redirect routes move too, so its old paths keep leading to the project now at
 * its path. In the caller's transaction.
 */
export async function moveOverwrittenRelations(trx: Transaction<DB>, fromId: number, toId: number): Promise<void> {
  await trx.updateTable('users_star_projects').set({ project_id: toId }).where('project_id', '=', fromId)
    .where('user_id', 'not in', (eb) => eb.selectFrom('users_star_projects as s').select('s.user_id').where('s.project_id', '=', toId))
    .execute();
  await trx.updateTable('members').set({ source_id: toId }).where('source_type', '=', 'Project').where('source_id', '=', fromId)
    .where('user_id', 'not in', (eb) => eb.selectFrom('members as m').select('m.user_id')
      .where('m.source_type', '=', 'Project').where('m.source_id', '=', toId))
    .execute();
  await trx.updateTable('project_group_links').set({ project_id: toId }).where('project_id', '=', fromId)
    .where('group_id', 'not in', (eb) => eb.selectFrom('project_group_links as l').select('l.group_id').where('l.project_id', '=', toId))
    .execute();
  await trx.updateTable('deploy_keys_projects').set({ project_id: toId }).where('project_id', '=', fromId)
    .where('deploy_key_id', 'not in', (eb) => eb.selectFrom('deploy_keys_projects as k').select('k.deploy_key_id')
      .where('k.project_id', '=', toId))
    .execute();
  await trx.updateTable('notification_settings').set({ project_id: toId }).where('project_id', '=', fromId)
    .where('user_id', 'not in', (eb) => eb.selectFrom('notification_settings as n').select('n.user_id').where('n.project_id', '=', toId))
    .execute();
  await trx.updateTable('redirect_routes').set({ project_id: toId }).where('project_id', '=', fromId).execute();
}

/**
 * The imported project takes the overwritten one's name and path (Projects::UpdateService of the
 * Service's rename); no old path redirects to where it now lives (Route#delete_conflicting_redirects).
 */
export async function takePlace(trx: Transaction<DB>, projectId: number, place: { name: string; path: string; fullPath: string }) {
  await trx.deleteFrom('redirect_routes').where(sql`lower(path)`, '=', place.fullPath.toLowerCase()).execute();
  return trx.updateTable('projects').set({ name: place.name, path: place.path, updated_at: nowIso() }).where('id', '=', projectId)
    .returningAll().executeTakeFirstOrThrow();
}
