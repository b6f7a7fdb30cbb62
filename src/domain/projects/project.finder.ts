/**
 * The read side of GET /projects (the Service's ProjectsFinder): a pipeline of small filters over
 * one query builder. What a viewer may see comes first (administrators everything; anonymous
 * readers public projects; users public, internal unless external, and every project they reach
 * by membership), then the request's filters. The caller orders and paginates.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { VISIBILITY_LEVELS, type Visibility } from '../permissions/access.ts';
import { authorizedGroupLevels, sharedProjectLevels } from '../members/members.queries.ts';

type ProjectsQuery = SelectQueryBuilder<DB, 'projects', ProjectRow>;

export interface ProjectFilters {
  archived?: boolean;
  visibility?: Visibility;
  search?: string;
  owned?: boolean;
  membership?: boolean;
  minAccessLevel?: number;
  repositoryStorage?: string;
  lastActivityAfter?: string;
  lastActivityBefore?: string;
  idAfter?: number;
  idBefore?: number;
  /** Projects of these namespaces only (a group's projects, a user's personal ones). */
  namespaceIds?: number[];
  /** Projects this user starred (StarredProjectsFinder, `starred=true`). */
  starredBy?: number;
  /** Projects carrying every one of these topics, by name whatever the case (`topic=`). */
  topics?: string[];
  /** Every `custom_attributes[key]=value` pair must match (administrators' filter). */
  customAttributes?: Record<string, string>;
  /** The direct forks of this project (ForkProjectsFinder, GET /projects/:id/forks). */
  forksOf?: number;
}

/** LIKE pattern for a substring, with the wildcard characters of the input escaped. */
export function containsPattern(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface Reach {
  /** Project ids the user is a direct member of, with levels. */
  projects: Map<number, number>;
  /** Group ids the user reaches (inherited), with levels. */
  groups: Map<number, number>;
  personalNamespaceId: number | null;
}

export async function reachOf(db: Kysely<DB>, user: UserRow): Promise<Reach> {
  const [direct, groups, personal] = await Promise.all([
    db.selectFrom('members').select(['source_id', 'access_level']).where('user_id', '=', user.id).where(
      'source_type', '=', 'Project',
    ).execute(),
    authorizedGroupLevels(db, user.id),
    db.selectFrom('namespaces').select('id').where('owner_id', '=', user.id).where('kind', '=', 'user').executeTakeFirst(),
  ]);
  const projects = new Map(direct.map((m) => [m.source_id, m.access_level]));
  // Projects shared with a group the user reaches (ProjectGroupLink).
  for (const [id, level] of await sharedProjectLevels(db, groups)) if (level > (projects.get(id) ?? 0)) projects.set(id, level);
  return { projects, groups, personalNamespaceId: personal?.id ?? null };
}

const idsAtLeast = (levels: Map<number, number>, min: number) => [...levels].filter(([, l]) => l >= min).map(([id]) => id);

/** Projects reached by membership at `min` or above: direct, or through a group. */
function byMembership(qb: ProjectsQuery, reach: Reach, min: number): ProjectsQuery {
  const projectIds = idsAtLeast(reach.projects, min);
  const groupIds = idsAtLeast(reach.groups, min);
  if (projectIds.length === 0 && groupIds.length === 0) return qb.where(sql<boolean>`1 = 0`);
  return qb.where((eb) => eb.or([
    ...(projectIds.length ? [eb('projects.id', 'in', projectIds)] : []),
    ...(groupIds.length ? [eb('projects.namespace_id', 'in', groupIds)] : []),
  ]));
}

export async function findProjects(db: Kysely<DB>, viewer: UserRow | null, f: ProjectFilters): Promise<ProjectsQuery> {
  let qb: ProjectsQuery = db.selectFrom('projects').selectAll('projects').where('projects.pending_delete', '=', 0);
  const reach = viewer && (f.membership || f.owned || f.minAccessLevel !== undefined || !viewer.admin) ? await reachOf(db, viewer) : null;

  if (!viewer) {
    qb = qb.where('projects.visibility_level', '=', VISIBILITY_LEVELS.public);
  } else if (!viewer.admin) {
    const r = reach!;
    const minVisible = viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal;
    const projectIds = [...r.projects.keys()];
    const groupIds = [...r.groups.keys()];
    qb = qb.where((eb) => eb.or([
      eb('projects.visibility_level', '>=', minVisible),
      ...(projectIds.length ? [eb('projects.id', 'in', projectIds)] : []),
      ...(groupIds.length ? [eb('projects.namespace_id', 'in', groupIds)] : []),
    ]));
  }

  if (reach && (f.membership || f.minAccessLevel !== undefined)) qb = byMembership(qb, reach, f.minAccessLevel ?? 10);
  if (reach && f.owned) {
    const ownedGroups = idsAtLeast(reach.groups, 50);
    const namespaces = [...ownedGroups, ...(reach.personalNamespaceId ? [reach.personalNamespaceId] : [])];
    qb = namespaces.length ? qb.where('projects.namespace_id', 'in', namespaces) : qb.where(sql<boolean>`1 = 0`);
  }
  if (f.namespaceIds) qb = f.namespaceIds.length ? qb.where('projects.namespace_id', 'in', f.namespaceIds) : qb.where(sql<boolean>`1 = 0`);
  if (f.starredBy !== undefined) {
    const userId = f.starredBy;
    qb = qb.where('projects.id', 'in', (eb) => eb.selectFrom('users_star_projects').select('users_star_projects.project_id')
      .where('users_star_projects.user_id', '=', userId));
  }
  // The projects of each topic, found from the topic (topics_name_lower, project_topics_topic).
  for (const topic of f.topics ?? []) {
    qb = qb.where('projects.id', 'in', (eb) => eb.selectFrom('project_topics').select('project_topics.project_id')
      .where('project_topics.topic_id', 'in', eb.selectFrom('topics').select('topics.id').where(sql`lower(topics.name)`, '=', topic.toLowerCase())));
  }
  // Each pair found from its key and value (project_custom_attributes_key_value).
  for (const [key, value] of Object.entries(f.customAttributes ?? {})) {
    // Stored keys are at most 255 characters: a longer one matches nothing and is not sent.
    if (key.length > 255) return qb.where(sql<boolean>`1 = 0`);
    qb = qb.where('projects.id', 'in', (eb) => eb.selectFrom('project_custom_attributes').select('project_custom_attributes.project_id')
      .where('project_custom_attributes.key', '=', key).where('project_custom_attributes.value', '=', value));
  }
  if (f.forksOf !== undefined) {
    const sourceId = f.forksOf;
    // project_forks_forked_from serves it.
    qb = qb.where('projects.id', 'in', (eb) => eb.selectFrom('project_forks').select('project_forks.project_id')
      .where('project_forks.forked_from_project_id', '=', sourceId));
  }
  if (f.archived !== undefined) qb = qb.where('projects.archived', '=', f.archived ? 1 : 0);
  if (f.visibility) qb = qb.where('projects.visibility_level', '=', VISIBILITY_LEVELS[f.visibility]);
  if (f.search) {
    const pattern = containsPattern(f.search);
    qb = qb.where((eb) => eb.or([
      eb(sql`lower(projects.name)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(projects.path)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(coalesce(projects.description, ''))`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  if (f.repositoryStorage) qb = qb.where('projects.repository_storage', '=', f.repositoryStorage);
  if (f.lastActivityAfter) qb = qb.where('projects.last_activity_at', '>', f.lastActivityAfter);
  if (f.lastActivityBefore) qb = qb.where('projects.last_activity_at', '<', f.lastActivityBefore);
  if (f.idAfter !== undefined) qb = qb.where('projects.id', '>', f.idAfter);
  if (f.idBefore !== undefined) qb = qb.where('projects.id', '<', f.idBefore);
  return qb;
}
