/**
 * Every Kysely call about releases: a project's list (released_at or created_at, newest first by
 * default, id as the tie-break as ReleasesFinder orders), a group's, one by tag, the links,
 * milestones (with their issue counts) and evidence of several releases at once, and the writes.
 */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {
  ReleaseEvidenceRow, ReleaseLinkRow, ReleaseLinksTable, ReleaseRow, ReleasesTable,
} from '../../db/tables/releases.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function projectReleasesQuery(db: Db, projectId: number, orderBy: 'released_at' | 'created_at', sort: 'asc' | 'desc') {
  return db.selectFrom('releases').selectAll().where('project_id', '=', projectId)
    .orderBy(orderBy, sort).orderBy('id', sort);
}

/** A group's releases: those of the projects given (the group's and its subgroups' that the viewer may read; at least one). */
export function groupReleasesQuery(db: Db, projectIds: number[], sort: 'asc' | 'desc') {
  return db.selectFrom('releases').selectAll().where('project_id', 'in', projectIds)
    .orderBy('released_at', sort).orderBy('id', sort);
}

export function findRelease(db: Db, projectId: number, tag: string): Promise<ReleaseRow | undefined> {
  return db.selectFrom('releases').selectAll().where('project_id', '=', projectId).where('tag', '=', tag).executeTakeFirst();
}

/** The release latest by released_at (the permalink), or undefined. */
export function latestRelease(db: Db, projectId: number): Promise<ReleaseRow | undefined> {
  return projectReleasesQuery(db, projectId, 'released_at', 'desc').limit(1).executeTakeFirst();
}

/**
 * The tags of a project's releases, most recently released first, at most `limit` (the versions
 * a CI component's `~latest` chooses from).
 */
export async function releaseTags(db: Db, projectId: number, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('releases').select('tag').where('project_id', '=', projectId)
    .orderBy('released_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => r.tag);
}

/** The releases of these tags of a project (the tag entity's `release`). */
export async function releasesOfTags(db: Db, projectId: number, tags: string[]): Promise<Map<string, ReleaseRow>> {
  if (tags.length === 0) return new Map();
  const rows = await db.selectFrom('releases').selectAll().where('project_id', '=', projectId).where('tag', 'in', tags).execute();
  return new Map(rows.map((r) => [r.tag, r]));
}

export function insertRelease(db: Db, values: Insertable<ReleasesTable>): Promise<ReleaseRow> {
  return db.insertInto('releases').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateReleaseRow(db: Db, id: number, set: Updateable<ReleasesTable>): Promise<ReleaseRow | undefined> {
  return db.updateTable('releases').set(set).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Deletes the release; its links, milestone associations and evidence go with it (ON DELETE CASCADE). */
export async function deleteReleaseRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('releases').where('id', '=', id).execute();
}

/** Links of several releases, each release's newest first (Releases::Link.sorted). */
export function linksOfReleases(db: Db, releaseIds: number[]): Promise<ReleaseLinkRow[]> {
  if (releaseIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('release_links').selectAll().where('release_id', 'in', releaseIds)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export function linksQuery(db: Db, releaseId: number) {
  return db.selectFrom('release_links').selectAll().where('release_id', '=', releaseId)
    .orderBy('created_at', 'desc').orderBy('id', 'desc');
}

export function findLink(db: Db, releaseId: number, id: number): Promise<ReleaseLinkRow | undefined> {
  return db.selectFrom('release_links').selectAll().where('release_id', '=', releaseId).where('id', '=', id).executeTakeFirst();
}

export function insertLink(db: Db, values: Insertable<ReleaseLinksTable>): Promise<ReleaseLinkRow> {
  return db.insertInto('release_links').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateLinkRow(db: Db, id: number, set: Updateable<ReleaseLinksTable>): Promise<ReleaseLinkRow | undefined> {
  return db.updateTable('release_links').set(set).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteLinkRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('release_links').where('id', '=', id).execute();
}

/** Whether another link of the release already has this name or url (the unique indexes decide; this words the refusal). */
export async function takenLinkFields(
  db: Db, releaseId: number, name: string, url: string, exceptId?: number,
): Promise<('name' | 'url')[]> {
  let qb = db.selectFrom('release_links').select(['name', 'url']).where('release_id', '=', releaseId)
    .where((eb) => eb.or([eb('name', '=', name), eb('url', '=', url)]));
  if (exceptId !== undefined) qb = qb.where('id', '!=', exceptId);
  const rows = await qb.execute();
  const taken: ('name' | 'url')[] = [];
  if (rows.some((r) => r.name === name)) taken.push('name');
  if (rows.some((r) => r.url === url)) taken.push('url');
  return taken;
}

/** Milestones of several releases, by release id, in the order the release was given them. */
export async function milestonesOfReleases(db: Db, releaseIds: number[]): Promise<Map<number, MilestoneRow[]>> {
  const out = new Map<number, MilestoneRow[]>();
  if (releaseIds.length === 0) return out;
  const rows = await db.selectFrom('milestone_releases').innerJoin('milestones', 'milestones.id', 'milestone_releases.milestone_id')
    .selectAll('milestones').select('milestone_releases.release_id as release_id')
    .where('milestone_releases.release_id', 'in', releaseIds).orderBy('milestones.id').execute();
  for (const { release_id: releaseId, ...m } of rows) {
    if (!out.has(releaseId)) out.set(releaseId, []);
    out.get(releaseId)!.push(m);
  }
  return out;
}

/** Issue counts of milestones: total and closed (MilestoneWithStats' issue_stats). */
export async function milestoneIssueStats(db: Db, milestoneIds: number[]): Promise<Map<number, { total: number; closed: number }>> {
  const out = new Map<number, { total: number; closed: number }>();
  if (milestoneIds.length === 0) return out;
  const rows = await db.selectFrom('issues').select(['milestone_id', 'state', sql<number>`count(*)`.as('n')])
    .where('milestone_id', 'in', milestoneIds).groupBy(['milestone_id', 'state']).execute();
  for (const id of milestoneIds) out.set(id, { total: 0, closed: 0 });
  for (const r of rows) {
    const s = out.get(r.milestone_id!)!;
    s.total += Number(r.n);
    if (r.state === 'closed') s.closed += Number(r.n);
  }
  return out;
}

/** Milestones of the project or of these groups with these titles (a release's `milestones`). */
export function milestonesByTitles(db: Db, projectId: number, groupIds: number[], titles: string[]): Promise<MilestoneRow[]> {
  if (titles.length === 0) return Promise.resolve([]);
  return db.selectFrom('milestones').selectAll().where('title', 'in', titles)
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])]))
    .orderBy('id').execute();
}

export async function setReleaseMilestones(db: Db, releaseId: number, milestoneIds: number[]): Promise<void> {
  await db.deleteFrom('milestone_releases').where('release_id', '=', releaseId).execute();
  if (milestoneIds.length) {
    await db.insertInto('milestone_releases').values(milestoneIds.map((id) => ({ milestone_id: id, release_id: releaseId }))).execute();
  }
}

export function evidencesOfReleases(db: Db, releaseIds: number[]): Promise<ReleaseEvidenceRow[]> {
  if (releaseIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('release_evidences').selectAll().where('release_id', 'in', releaseIds).orderBy('id').execute();
}

export async function insertEvidence(db: Db, values: { release_id: number; summary: string; summary_sha: string; created_at: string }) {
  await db.insertInto('release_evidences').values(values).execute();
}

/** What an evidence summary tells of the release's milestones' issues. */
export function issuesOfMilestones(db: Db, milestoneIds: number[]) {
  if (milestoneIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('issues').innerJoin('users', 'users.id', 'issues.author_id')
    .select([
      'issues.id', 'issues.milestone_id', 'issues.title', 'issues.description', 'issues.state', 'issues.iid',
      'issues.confidential', 'issues.created_at', 'issues.due_date',
      'users.id as author_id', 'users.name as author_name', 'users.email as author_email',
    ])
    .where('issues.milestone_id', 'in', milestoneIds).orderBy('issues.id').execute();
}

export function projectSummary(db: Db, projectId: number) {
  return db.selectFrom('projects').select(['id', 'name', 'description', 'created_at'])
    .where('id', '=', projectId).executeTakeFirstOrThrow();
}

/** The projects of these namespaces (a group's releases cover its and its subgroups' projects). */
export function projectsOfNamespaces(db: Db, namespaceIds: number[]) {
  if (namespaceIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('projects').selectAll().where('namespace_id', 'in', namespaceIds).orderBy('id').execute();
}
