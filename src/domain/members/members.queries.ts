/**
 * Every Kysely call about memberships: direct members of a project or group, and the levels a
 * user holds through groups (a group's members inherit access to its sub-groups and projects;
 * the highest level wins).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { param, prepared, type Prepared } from '../../db/prepared.ts';
import { cachedRead } from '../../db/read-cache.ts';
import type { MemberRow, MemberSourceType } from '../../db/tables/projects.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { containsPattern, userMatches } from '../users/users.finder.ts';
import { descendantGroupIds, MAX_NAMESPACE_DEPTH, namespacePathsById } from '../namespaces/namespaces.queries.ts';
import {
  activeGroupLinks, activeProjectLinks, groupLinksOfGroups, groupLinksToGroups, projectLinksOfProjects, projectLinksToGroups,
  type ActiveLink,
} from '../group-links/group-links.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findMember(db: Db, sourceType: MemberSourceType, sourceId: number, userId: number): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll()
    .where('source_type', '=', sourceType).where('source_id', '=', sourceId).where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Direct members with their user rows, for the members resource; ordered by member id. */
export function membersQuery(db: Db, sourceType: MemberSourceType, sourceId: number) {
  return db.selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .selectAll('users')
    .select([
      'members.id as member_id', 'members.access_level', 'members.expires_at',
      'members.created_at as member_created_at', 'members.created_by_id as member_created_by_id',
    ])
    .where('members.source_type', '=', sourceType).where('members.source_id', '=', sourceId)
    .orderBy('members.id');
}

/**
 * A project's users (ProjectTeam#users, GET /projects/:id/users): members of the project and of
 * the groups above it (`lineage`), each once, by user id; `search` as User.search, `skip` left out.
 */
export function projectUsersQuery(db: Db, projectId: number, lineage: number[], f: { search?: string; skip: number[] }) {
  let qb = db.selectFrom('users').selectAll('users').where('users.id', 'in', (eb) => eb.selectFrom('members').select('members.user_id')
    .where((m) => m.or([
      m.and([m('members.source_type', '=', 'Project'), m('members.source_id', '=', projectId)]),
      ...(lineage.length > 0 ? [m.and([m('members.source_type', '=', 'Namespace'), m('members.source_id', 'in', lineage)])] : []),
    ])));
  const search = f.search;
  if (search) qb = qb.where((eb) => userMatches(eb, containsPattern(search), search.toLowerCase(), false));
  if (f.skip.length > 0) qb = qb.where('users.id', 'not in', f.skip);
  return qb.orderBy('users.id');
}

/**
 * Members of a project or group including those who hold access through an ancestor group
 * (`GET /:source/:id/members/all`; the Service's MembersFinder / GroupMembersFinder with the
 * inherited and direct relations): one row per user, the membership with the highest access
 * level, a project's own membership first on a tie (the Service's DISTINCT ON ordering), then the
 * oldest. Ordered by user id, as the Service's DISTINCT ON (user_id) answers. `groupIds` is the
 * lineage of groups whose members count (a group and its ancestors; a project's namespace's).
 */
export function allMembersQuery(
  db: Db, sources: { projectId: number | null; groupIds: number[]; links?: { groupIds: number[]; access: number }[] },
) {
  const rowsOf = (cap: number | null) => db.selectFrom('members').select([
    'members.id', 'members.user_id', 'members.expires_at', 'members.created_at', 'members.created_by_id',
    cap === null ? 'members.access_level'
      : sql<number>`case when members.access_level < ${cap} then members.access_level else cast(${cap} as integer) end`.as('access_level'),
    sql<number>`case when members.source_type = 'Project' then 0 else 1 end`.as('project_first'),
  ]);
  let union = rowsOf(null).where((eb) => eb.or([
    ...(sources.projectId !== null
      ? [eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', sources.projectId)])] : []),
    ...(sources.groupIds.length > 0
      ? [eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', sources.groupIds)])] : []),
  ]));
  // Members of the groups the project or group is shared with (MembersFinder's invited groups),
  // each at the lower of their level and the link's.
  for (const link of sources.links ?? []) {
    if (link.groupIds.length === 0) continue;
    union = union.unionAll(
      rowsOf(link.access).where('members.source_type', '=', 'Namespace').where('members.source_id', 'in', link.groupIds),
    );
  }
  const ranked = db.selectFrom(union.as('u'))
    .select(['u.id', 'u.user_id', 'u.access_level', 'u.expires_at', 'u.created_at', 'u.created_by_id'])
    .select((eb) => eb.fn.agg<number>('row_number').over((ob) => ob.partitionBy('u.user_id')
      .orderBy('u.access_level', 'desc').orderBy('u.project_first').orderBy('u.id')).as('rank'));
  return db.selectFrom(ranked.as('m'))
    .innerJoin('users', 'users.id', 'm.user_id')
    .selectAll('users')
    .select([
      'm.id as member_id', 'm.access_level', 'm.expires_at', 'm.created_at as member_created_at', 'm.created_by_id as member_created_by_id',
    ])
    .where('m.rank', '=', 1)
    .orderBy('m.user_id');
}

export async function insertMember(
  db: Db,
  m: {
    sourceType: MemberSourceType; sourceId: number; userId: number; accessLevel: number;
    expiresAt?: string | null; createdById: number | null;
  },
): Promise<MemberRow> {
  const now = nowIso();
  return db.insertInto('members').values({
    source_type: m.sourceType, source_id: m.sourceId, user_id: m.userId, access_level: m.accessLevel,
    expires_at: m.expiresAt ?? null, created_by_id: m.createdById, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/**
 * A new member, with the event the Service's ProjectMember#post_create_hook records: the member's
 * own 'joined' on a project, except for the holder of a personal project's namespace (its owner,
 * added as the project is created).
 */
export async function addMember(db: Kysely<DB>, m: Parameters<typeof insertMember>[1]): Promise<MemberRow> {
  return db.transaction().execute((trx) => insertMemberWithEvent(trx, m));
}

/** addMember inside the caller's transaction. */
export async function insertMemberWithEvent(trx: Transaction<DB>, m: Parameters<typeof insertMember>[1]): Promise<MemberRow> {
  const row = await insertMember(trx, m);
  if (m.sourceType === 'Project') {
    const holder = await trx.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select('namespaces.owner_id').where('projects.id', '=', m.sourceId).where('namespaces.kind', '=', 'user').executeTakeFirst();
    if (holder?.owner_id !== m.userId) {
      await recordEvent(trx, { project_id: m.sourceId, author_id: m.userId, action: 'joined', target_type: null, target_id: null });
    }
  }
  return row;
}

export async function updateMember(db: Db, id: number, set: { accessLevel?: number; expiresAt?: string | null }): Promise<void> {
  await db.updateTable('members').set({
    ...(set.accessLevel !== undefined ? { access_level: set.accessLevel } : {}),
    ...(set.expiresAt !== undefined ? { expires_at: set.expiresAt } : {}),
    updated_at: nowIso(),
  }).where('id', '=', id).execute();
}

export async function deleteMember(db: Db, id: number): Promise<void> {
  await db.deleteFrom('members').where('id', '=', id).execute();
}

export async function deleteMembersOf(db: Db, sourceType: MemberSourceType, sourceIds: number[]): Promise<void> {
  if (sourceIds.length === 0) return;
  await db.deleteFrom('members').where('source_type', '=', sourceType).where('source_id', 'in', sourceIds).execute();
}

const OWNER = 50;

/**
 * Changes (`set`) or removes (`null`) a membership, unless it is a group's owner and no other
 * direct owner would be left (the members API's 403). The count and the write are one transaction
 * behind a lock of the group's row, so two owners demoted or removed at once cannot each count the
 * other and leave the group without one (issue 35, item 1). The lock is a write of a column to
 * itself (as storage-moves' lockContainers), without dialect-specific SQL. False when refused.
 */
export async function changeMemberKeepingAnOwner(
  db: Kysely<DB>, memberId: number, set: { accessLevel?: number; expiresAt?: string | null } | null,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const member = await trx.selectFrom('members').selectAll().where('id', '=', memberId).executeTakeFirst();
    if (!member) return true;
    const losesOwner = member.source_type === 'Namespace' && member.access_level === OWNER
      && (set === null || (set.accessLevel ?? OWNER) !== OWNER);
    if (losesOwner) {
      await trx.updateTable('namespaces').set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('id', '=', member.source_id).execute();
      const others = await trx.selectFrom('members').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('source_type', '=', 'Namespace').where('source_id', '=', member.source_id).where('access_level', '=', OWNER)
        .where('id', '!=', member.id).executeTakeFirstOrThrow();
      if (Number(others.n) === 0) return false;
    }
    if (set === null) {
      await deleteMember(trx, member.id);
      // ProjectMember#post_destroy_hook: the member's own 'left' event on the project.
      if (member.source_type === 'Project') {
        await recordEvent(trx, {
          project_id: member.source_id, author_id: member.user_id, action: 'left', target_type: null, target_id: null,
        });
      }
    } else {
      await updateMember(trx, member.id, set);
    }
    return true;
  });
}

export async function countOwners(db: Db, groupId: number): Promise<number> {
  const row = await db.selectFrom('members').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('access_level', '=', 50)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Groups the user directly owns and where nobody else is an owner, directly or through an
 * ancestor group (the Service's solo_owned_groups: `last_owner?` counts the owners of the group
 * and its parents). A user who has any cannot be deleted without hard_delete (409); with it,
 * these groups go too. Rows whose group no longer exists are not ownerships.
 */
export async function groupsSolelyOwnedBy(db: Db, userId: number): Promise<number[]> {
  const owned = await db.selectFrom('members').select('source_id')
    .where('user_id', '=', userId).where('source_type', '=', 'Namespace').where('access_level', '=', 50).execute();
  if (owned.length === 0) return [];
  const paths = await namespacePathsById(db, owned.map((o) => o.source_id));
  const sole: number[] = [];
  for (const { source_id } of owned) {
    const lineage = paths.get(source_id)?.lineage;
    if (!lineage) continue;
    const other = await db.selectFrom('members').select('id')
      .where('source_type', '=', 'Namespace').where('source_id', 'in', lineage)
      .where('access_level', '=', 50).where('user_id', '!=', userId)
      .limit(1).executeTakeFirst();
    if (!other) sole.push(source_id);
  }
  return sole;
}

/**
 * The user's highest access level over all their memberships, projects and groups alike
 * (UserHighestRole; 0 when they have none). Rows whose source went with its owner's namespace
 * are not memberships. Served by members_user (user_id, source_type, source_id, access_level).
 */
const highestRoleQuery = prepared((db) => db.selectFrom('members')
  .leftJoin('projects', (j) => j.onRef('projects.id', '=', 'members.source_id').on('members.source_type', '=', 'Project'))
  .leftJoin('namespaces', (j) => j.onRef('namespaces.id', '=', 'members.source_id').on('members.source_type', '=', 'Namespace'))
  .select((eb) => eb.fn.max<number>('members.access_level').as('level'))
  .where('members.user_id', '=', param<number>(0))
  .where((eb) => eb.or([eb('projects.id', 'is not', null), eb('namespaces.id', 'is not', null)])));

export function highestRoleOf(db: Db, userId: number): Promise<number> {
  // Compiled once and remembered until the next write: the administrator's view of a user asks every time.
  return cachedRead(
    db as Kysely<DB>, `highest-role:${userId}`,
    async () => Number((await highestRoleQuery.first(db, [userId]))?.level ?? 0),
  );
}

/** Highest level among direct memberships of the given groups. */
async function highestDirect(db: Db, userId: number, sourceType: MemberSourceType, sourceIds: number[]): Promise<number> {
  if (sourceIds.length === 0) return 0;
  const row = await db.selectFrom('members').select((eb) => eb.fn.max<number>('access_level').as('level'))
    .where('user_id', '=', userId).where('source_type', '=', sourceType).where('source_id', 'in', sourceIds)
    .executeTakeFirst();
  return Number(row?.level ?? 0);
}

/**
 * What links give the user: for each link, their level in the linked group (or above it) capped
 * at the link's level; the highest of those.
 */
async function linkedLevel(db: Db, userId: number, links: ActiveLink[]): Promise<number> {
  if (links.length === 0) return 0;
  const paths = await namespacePathsById(db, [...new Set(links.map((l) => l.groupId))]);
  let best = 0;
  for (const link of links) {
    const lineage = paths.get(link.groupId)?.lineage;
    if (!lineage) continue;
    best = Math.max(best, Math.min(link.access, await highestDirect(db, userId, 'Namespace', lineage)));
  }
  return best;
}

/**
 * The user's level in a group: the highest over the group and its ancestors (`lineage`), and
 * through the groups any of them is shared with (GroupGroupLink).
 */
export async function groupAccessLevel(db: Db, userId: number, lineage: number[]): Promise<number> {
  const [own, links] = await Promise.all([highestDirect(db, userId, 'Namespace', lineage), activeGroupLinks(db, lineage)]);
  return Math.max(own, await linkedLevel(db, userId, links));
}

/**
 * The user's level in a project: direct membership, through its namespace's groups, or through a
 * group the project or one of those groups is shared with (ProjectGroupLink, GroupGroupLink).
 */
export async function projectAccessLevel(db: Db, userId: number, projectId: number, namespaceLineage: number[]): Promise<number> {
  const [direct, inherited, projectLinks, groupLinks] = await Promise.all([
    highestDirect(db, userId, 'Project', [projectId]),
    highestDirect(db, userId, 'Namespace', namespaceLineage),
    activeProjectLinks(db, projectId),
    activeGroupLinks(db, namespaceLineage),
  ]);
  return Math.max(direct, inherited, await linkedLevel(db, userId, [...projectLinks, ...groupLinks]));
}

/**
 * What links give the user on each of a page of projects (`lineage`: the project's namespace's
 * groups, nearest first): the project's own links and those of its groups, each capped at the
 * link's level. Two statements when nothing on the page is shared, which is the usual case.
 */
export async function linkedLevelsOnProjects(
  db: Db, userId: number, projects: { id: number; lineage: number[] }[],
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (projects.length === 0) return out;
  const [projectLinks, groupLinks] = await Promise.all([
    projectLinksOfProjects(db, projects.map((p) => p.id)),
    groupLinksOfGroups(db, [...new Set(projects.flatMap((p) => p.lineage))]),
  ]);
  if (projectLinks.length === 0 && groupLinks.length === 0) return out;
  const levels = await authorizedGroupLevels(db, userId);
  for (const p of projects) {
    const links = [
      ...projectLinks.filter((l) => l.project_id === p.id).map((l) => ({ groupId: l.group_id, access: l.group_access })),
      ...groupLinks.filter((l) => p.lineage.includes(l.shared_group_id))
        .map((l) => ({ groupId: l.shared_with_group_id, access: l.group_access })),
    ];
    const level = Math.max(0, ...links.map((l) => Math.min(l.access, levels.get(l.groupId) ?? 0)));
    if (level > 0) out.set(p.id, level);
  }
  return out;
}

/**
 * Projects the user reaches through links to groups they reach (`groupLevels`, from
 * authorizedGroupLevels): each at the lower of the two levels.
 */
export async function sharedProjectLevels(db: Db, groupLevels: Map<number, number>): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const link of await projectLinksToGroups(db, [...groupLevels.keys()])) {
    const level = Math.min(link.group_access, groupLevels.get(link.group_id) ?? 0);
    if (level > (out.get(link.project_id) ?? 0)) out.set(link.project_id, level);
  }
  return out;
}

/** The user's direct group memberships (group id and level), in membership order. */
export function directGroupMemberships(db: Db, userId: number): Promise<{ source_id: number; access_level: number }[]> {
  return db.selectFrom('members').select(['source_id', 'access_level'])
    .where('user_id', '=', userId).where('source_type', '=', 'Namespace').orderBy('id').execute();
}

/**
 * Every group the user reaches and the level they hold there: their direct group memberships,
 * inherited down to every sub-group (the highest level along the way).
 */
export async function authorizedGroupLevels(db: Db, userId: number): Promise<Map<number, number>> {
  const direct = await db.selectFrom('members').select(['source_id', 'access_level'])
    .where('user_id', '=', userId).where('source_type', '=', 'Namespace').execute();
  const levels = new Map<number, number>(direct.map((m) => [m.source_id, m.access_level]));
  if (levels.size === 0) return levels;
  const directIds = [...levels.keys()];
  const parentOf = await descendantGroupIds(db, directIds);
  const directParents = await db.selectFrom('namespaces').select(['id', 'parent_id']).where('id', 'in', directIds).execute();
  for (const d of directParents) if (d.parent_id !== null) parentOf.set(d.id, d.parent_id);
  // Inherit down until nothing changes (a chain is at most MAX_NAMESPACE_DEPTH long).
  for (let changed = true, rounds = 0; changed && rounds <= MAX_NAMESPACE_DEPTH; rounds += 1) {
    changed = false;
    for (const [child, parent] of parentOf) {
      const inherited = Math.max(levels.get(child) ?? 0, levels.get(parent) ?? 0);
      if (inherited !== levels.get(child)) {
        levels.set(child, inherited);
        changed = true;
      }
    }
  }
  for (const [id, level] of levels) if (level === 0) levels.delete(id);
  return withSharedGroups(db, levels);
}

/**
 * Adds the groups shared with the groups of `levels` (GroupGroupLink), each at the lower of the
 * member's level and the link's, inherited down their sub-groups; the highest level wins.
 */
async function withSharedGroups(db: Db, levels: Map<number, number>): Promise<Map<number, number>> {
  const links = await groupLinksToGroups(db, [...levels.keys()]);
  if (links.length === 0) return levels;
  const shared = new Map<number, number>();
  for (const l of links) {
    const level = Math.min(l.group_access, levels.get(l.shared_with_group_id) ?? 0);
    if (level > (shared.get(l.shared_group_id) ?? 0)) shared.set(l.shared_group_id, level);
  }
  const parentOf = await descendantGroupIds(db, [...shared.keys()]);
  // Descendants in breadth order (descendantGroupIds walks one level at a time): a parent's level is final before its children's.
  for (const [child, parent] of parentOf) shared.set(child, Math.max(shared.get(child) ?? 0, shared.get(parent) ?? 0));
  for (const [id, level] of shared) if (level > (levels.get(id) ?? 0)) levels.set(id, level);
  return levels;
}

/** The user's direct memberships (GET /users/:id/memberships), with the source's name. */
export function membershipsQuery(db: Db, userId: number, type: MemberSourceType | undefined) {
  let q = db.selectFrom('members')
    .leftJoin('projects', (j) => j.onRef('projects.id', '=', 'members.source_id').on('members.source_type', '=', 'Project'))
    .leftJoin('namespaces', (j) => j.onRef('namespaces.id', '=', 'members.source_id').on('members.source_type', '=', 'Namespace'))
    .select([
      'members.id', 'members.source_id', 'members.source_type', 'members.access_level',
      'projects.name as project_name', 'namespaces.name as group_name',
    ])
    .where('members.user_id', '=', userId)
    // Members are polymorphic (no foreign key): a source removed with its owner's namespace leaves
    // rows that no longer name anything, which are not memberships.
    .where((eb) => eb.or([eb('projects.id', 'is not', null), eb('namespaces.id', 'is not', null)]));
  if (type) q = q.where('members.source_type', '=', type);
  return q.orderBy('members.id');
}

/** The statements of membershipsOfUserIn, compiled once per (number of projects, number of groups). */
const membershipsIn = new Map<string, Prepared<{ source_type: string; source_id: number; access_level: number }>>();
/** Beyond this many ids a page is no page: such a lookup is built each time. */
const MAX_PREPARED_IDS = 100;

/**
 * The user's direct memberships of the given projects and groups (a page of projects and their
 * namespaces' lineages): one statement on members_user (user_id, source_type, source_id),
 * compiled once per shape as the other lookups behind a page are (db/query-shape.ts ByIds).
 */
export async function membershipsOfUserIn(
  db: Db, userId: number, projectIds: number[], groupIds: number[],
): Promise<{ source_type: string; source_id: number; access_level: number }[]> {
  const projects = [...new Set(projectIds)];
  const groups = [...new Set(groupIds)];
  if (projects.length === 0 && groups.length === 0) return [];
  const build = (d: Db, user: number, p: number[], g: number[]) => d.selectFrom('members')
    .select(['source_type', 'source_id', 'access_level'])
    .where('user_id', '=', user)
    .where((eb) => eb.or([
      ...(p.length > 0 ? [eb.and([eb('source_type', '=', 'Project'), eb('source_id', 'in', p)])] : []),
      ...(g.length > 0 ? [eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', g)])] : []),
    ]));
  if (projects.length + groups.length > MAX_PREPARED_IDS) return build(db, userId, projects, groups).execute();
  const key = `${projects.length}:${groups.length}`;
  let statement = membershipsIn.get(key);
  if (!statement) {
    const at = (offset: number, n: number) => Array.from({ length: n }, (_, i) => param<number>(offset + i));
    statement = prepared((d) => build(d, param<number>(0), at(1, projects.length), at(1 + projects.length, groups.length)));
    membershipsIn.set(key, statement);
  }
  return statement.all(db as Kysely<DB>, [userId, ...projects, ...groups]);
}
