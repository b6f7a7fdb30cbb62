/**
 * Every Kysely call about labels: the labels a project or group may use (its own and its ancestor
 * groups'; a group's descendants' and projects' on request, as the Service's LabelsFinder gives
 * them), priorities per project, subscriptions, the issue counts of `with_counts`, and the
 * find-or-create the issues area uses when an issue names labels by title.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { idFromText } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { DEFAULT_LABEL_COLOR } from './color.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Whose labels a list reads: labels of these projects and of these groups. */
export interface LabelScope {
  projectIds: number[];
  groupIds: number[];
}

export interface LabelFilters {
  /** Title or description containing this, case-insensitively (Label.search). */
  search?: string;
  /** Exactly this title. */
  title?: string;
}

/** LIKE pattern for a substring, with the wildcard characters of the input escaped. */
function containsPattern(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The labels of a scope in the Service's order (title, then id), filtered. */
export function labelsQuery(db: Db, scope: LabelScope, f: LabelFilters = {}) {
  let qb = db.selectFrom('labels').selectAll('labels');
  const { projectIds, groupIds } = scope;
  if (projectIds.length === 0 && groupIds.length === 0) qb = qb.where(sql<boolean>`1 = 0`);
  else {
    qb = qb.where((eb) => eb.or([
      ...(projectIds.length ? [eb('labels.project_id', 'in', projectIds)] : []),
      ...(groupIds.length ? [eb('labels.group_id', 'in', groupIds)] : []),
    ]));
  }
  if (f.title !== undefined) qb = qb.where('labels.title', '=', f.title);
  if (f.search) {
    const pattern = containsPattern(f.search);
    qb = qb.where((eb) => eb.or([
      eb(sql`lower(labels.title)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(coalesce(labels.description, ''))`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  return qb.orderBy('labels.title', 'asc').orderBy('labels.id', 'asc');
}

/**
 * The label `idOrTitle` names in a scope: by id first, then by title (the Service's
 * `find_by_id(x) || find_by_title(x)`; an id is read as Ruby's to_i reads "12abc").
 */
export async function findLabelInScope(db: Db, scope: LabelScope, idOrTitle: string): Promise<LabelRow | undefined> {
  const id = idFromText(idOrTitle);
  if (id !== null) {
    const byId = await labelsQuery(db, scope).where('labels.id', '=', id).executeTakeFirst();
    if (byId) return byId;
  }
  return labelsQuery(db, scope, { title: idOrTitle }).executeTakeFirst();
}

export function findLabelById(db: Db, id: number): Promise<LabelRow | undefined> {
  return db.selectFrom('labels').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The labels a project may put on its issues, by title: its own and its ancestor groups'
 * (`groupLineage`, the project's namespace first, as ProjectContext.lineage holds it). One row
 * per title found: the project's own label, else the nearest group's.
 */
export async function availableLabels(
  db: Db, scope: { projectId: number; groupLineage: number[] }, titles: string[],
): Promise<LabelRow[]> {
  const wanted = [...new Set(titles)];
  if (wanted.length === 0) return [];
  const rows = await db.selectFrom('labels').selectAll()
    .where((eb) => eb.or([
      eb('project_id', '=', scope.projectId),
      ...(scope.groupLineage.length ? [eb('group_id', 'in', scope.groupLineage)] : []),
    ]))
    .where('title', 'in', wanted).execute();
  const rank = (r: LabelRow) => (r.project_id !== null ? -1 : scope.groupLineage.indexOf(r.group_id!));
  const best = new Map<string, LabelRow>();
  for (const r of rows) {
    const seen = best.get(r.title);
    if (!seen || rank(r) < rank(seen)) best.set(r.title, r);
  }
  return wanted.flatMap((t) => best.get(t) ?? []);
}

/**
 * The labels named by `titles` for a project, creating the missing ones as project labels of the
 * Service's default colour (Labels::FindOrCreateService). A concurrent creation of the same title
 * is absorbed by the unique index (ON CONFLICT DO NOTHING) and the row re-read, so it never fails.
 */
export async function findOrCreateProjectLabels(
  trx: Db, projectId: number, groupLineage: number[], titles: string[], now = nowIso(),
): Promise<LabelRow[]> {
  const found = await availableLabels(trx, { projectId, groupLineage }, titles);
  const have = new Set(found.map((r) => r.title));
  const missing = [...new Set(titles)].filter((t) => !have.has(t));
  if (missing.length === 0) return found;
  await trx.insertInto('labels')
    .values(missing.map((title) => ({
      project_id: projectId, group_id: null, title, color: DEFAULT_LABEL_COLOR, description: null, created_at: now, updated_at: now,
    })))
    .onConflict((oc) => oc.columns(['project_id', 'title']).where('project_id', 'is not', null).doNothing())
    .execute();
  return availableLabels(trx, { projectId, groupLineage }, titles);
}

export interface NewLabel {
  project_id: number | null;
  group_id: number | null;
  title: string;
  color: string;
  description: string | null;
}

export function insertLabel(db: Db, values: NewLabel, now = nowIso()): Promise<LabelRow> {
  return db.insertInto('labels').values({ ...values, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export function updateLabelRow(
  db: Db, id: number, set: Partial<Pick<LabelRow, 'title' | 'color' | 'description'>>, now = nowIso(),
): Promise<LabelRow | undefined> {
  return db.updateTable('labels').set({ ...set, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteLabelRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('labels').where('id', '=', id).execute();
}

/** Each label's priority in a project (label_priorities); labels without one are absent. */
export async function labelPriorities(db: Db, projectId: number, labelIds: number[]): Promise<Map<number, number>> {
  if (labelIds.length === 0) return new Map();
  const rows = await db.selectFrom('label_priorities').select(['label_id', 'priority'])
    .where('project_id', '=', projectId).where('label_id', 'in', labelIds).execute();
  return new Map(rows.map((r) => [r.label_id, r.priority]));
}

/** Sets (or with null removes) a label's priority in a project: one upsert on (project_id, label_id). */
export async function setLabelPriority(db: Db, projectId: number, labelId: number, priority: number | null): Promise<void> {
  if (priority === null) {
    await db.deleteFrom('label_priorities').where('project_id', '=', projectId).where('label_id', '=', labelId).execute();
    return;
  }
  await db.insertInto('label_priorities').values({ project_id: projectId, label_id: labelId, priority })
    .onConflict((oc) => oc.columns(['project_id', 'label_id']).doUpdateSet({ priority }))
    .execute();
}

/** Which of `labelIds` the user is subscribed to. */
export async function subscribedLabelIds(db: Db, userId: number | null, labelIds: number[]): Promise<Set<number>> {
  if (userId === null || labelIds.length === 0) return new Set();
  const rows = await db.selectFrom('subscriptions').select('subscribable_id')
    .where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', labelIds)
    .where('user_id', '=', userId).where('subscribed', '=', 1).execute();
  return new Set(rows.map((r) => r.subscribable_id));
}

/** Subscribes or unsubscribes a user to a label: one upsert on the subscription's unique index. */
export async function setLabelSubscription(
  db: Db, userId: number, labelId: number, projectId: number | null, subscribed: boolean, now = nowIso(),
): Promise<void> {
  const flag = subscribed ? 1 : 0;
  await db.insertInto('subscriptions').values({
    user_id: userId, subscribable_type: 'Label', subscribable_id: labelId, project_id: projectId, subscribed: flag,
    created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['subscribable_type', 'subscribable_id', 'user_id'])
    .doUpdateSet({ subscribed: flag, project_id: projectId, updated_at: now }))
    .execute();
}

/** Whose issues a label's counts read, and which confidential ones the viewer may count. */
export interface CountScope {
  labelIds: number[];
  projectIds: number[];
  /** The viewer reads every confidential issue of these projects (Reporter and up). */
  allConfidential: boolean;
  /** The viewer, who also counts confidential issues they wrote or are assigned. */
  userId: number | null;
}

/** Open and closed issues carrying each label, as the viewer may see them (the Service's IssuesFinder counts). */
export async function labelIssueCounts(db: Db, s: CountScope): Promise<Map<number, { opened: number; closed: number }>> {
  const out = new Map<number, { opened: number; closed: number }>();
  for (const id of s.labelIds) out.set(id, { opened: 0, closed: 0 });
  if (s.labelIds.length === 0 || s.projectIds.length === 0) return out;
  let qb = db.selectFrom('label_links').innerJoin('issues', 'issues.id', 'label_links.target_id')
    .select(['label_links.label_id', 'issues.state', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('label_links.target_type', '=', 'Issue').where('label_links.label_id', 'in', s.labelIds)
    .where('issues.project_id', 'in', s.projectIds);
  if (!s.allConfidential) {
    const userId = s.userId;
    qb = qb.where((eb) => eb.or([
      eb('issues.confidential', '=', 0),
      ...(userId === null ? [] : [
        eb('issues.author_id', '=', userId),
        eb.exists(eb.selectFrom('issue_assignees').select('issue_id')
          .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', userId)),
      ]),
    ]));
  }
  const rows = await qb.groupBy(['label_links.label_id', 'issues.state']).execute();
  for (const r of rows) {
    const c = out.get(r.label_id)!;
    if (r.state === 'opened') c.opened += Number(r.n);
    else if (r.state === 'closed') c.closed += Number(r.n);
  }
  return out;
}

/** Open merge requests carrying each label (open_merge_requests_count). */
export async function labelMergeRequestCounts(db: Db, labelIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>(labelIds.map((id) => [id, 0]));
  if (labelIds.length === 0) return out;
  const rows = await db.selectFrom('label_links').innerJoin('merge_requests', 'merge_requests.id', 'label_links.target_id')
    .select(['label_links.label_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('label_links.label_id', 'in', labelIds).where('label_links.target_type', '=', 'MergeRequest')
    .where('merge_requests.state', '=', 'opened')
    .groupBy('label_links.label_id').execute();
  for (const r of rows) out.set(r.label_id, Number(r.n));
  return out;
}
