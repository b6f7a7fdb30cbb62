/** Every Kysely call about project rows. */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow, ProjectsTable } from '../../db/tables/projects.ts';
import { nowIso } from '../clock.ts';
import { findNamespaceByFullPath } from '../namespaces/namespaces.queries.ts';
import { isStorableText } from '../../db/constraints.ts';
import { redirectedProjectId } from './redirect-routes.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findProjectById(db: Db, id: number): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
}

/** `:id` of the projects resource: an integer id or the full path (`group/sub/project`). */
export async function findProjectByIdOrPath(db: Db, idOrPath: string): Promise<ProjectRow | undefined> {
  if (/^\d+$/.test(idOrPath)) {
    const id = Number(idOrPath);
    return Number.isSafeInteger(id) && id <= 2_147_483_647 ? findProjectById(db, id) : undefined;
  }
  const slash = idOrPath.lastIndexOf('/');
  if (slash <= 0) return undefined;
  // A project path is a varchar(255) without NUL: anything else names no project (git's and
  // GraphQL's paths come here unchecked; the namespace part is bounded the same way).
  const path = idOrPath.slice(slash + 1);
  if (path.length > 255 || !isStorableText(path)) return undefined;
  const namespace = await findNamespaceByFullPath(db, idOrPath.slice(0, slash));
  const found = namespace ? await findProjectInNamespace(db, namespace.id, path) : undefined;
  if (found) return found;
  // An old path of a project that moved (Project.find_by_full_path(…, follow_redirects: true)).
  if (idOrPath.length > 4096 || !isStorableText(idOrPath)) return undefined;
  const redirected = await redirectedProjectId(db, idOrPath);
  return redirected === undefined ? undefined : findProjectById(db, redirected);
}

export function findProjectInNamespace(db: Db, namespaceId: number, path: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll()
    .where('namespace_id', '=', namespaceId).where(sql`lower(path)`, '=', path.toLowerCase()).where('pending_delete', '=', 0)
    .executeTakeFirst();
}

/** Which of `name` / `path` another project of the namespace already uses (case-insensitive). */
export async function takenInNamespace(
  db: Db, namespaceId: number, name: string, path: string, exceptId = 0,
): Promise<{ name: boolean; path: boolean }> {
  const rows = await db.selectFrom('projects').select(['name', 'path'])
    .where('namespace_id', '=', namespaceId).where('id', '!=', exceptId)
    .where((eb) => eb.or([eb(sql`lower(name)`, '=', name.toLowerCase()), eb(sql`lower(path)`, '=', path.toLowerCase())]))
    .execute();
  return {
    name: rows.some((r) => r.name.toLowerCase() === name.toLowerCase()),
    path: rows.some((r) => r.path.toLowerCase() === path.toLowerCase()),
  };
}

/** A new project's row: what has a column default may be left out. */
export type NewProjectValues = Omit<Insertable<ProjectsTable>, 'id' | 'created_at' | 'updated_at' | 'last_activity_at'>;

export async function insertProject(db: Db, values: NewProjectValues): Promise<ProjectRow> {
  const now = nowIso();
  return db.insertInto('projects').values({ ...values, created_at: now, updated_at: now, last_activity_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

export async function updateProjectRow(db: Db, id: number, set: Omit<Updateable<ProjectsTable>, 'id' | 'created_at'>): Promise<ProjectRow> {
  return db.updateTable('projects').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** After a push: what the repository now holds, and the activity. */
export async function recordPush(
  db: Db, id: number, r: { defaultBranch: string | null; empty: boolean; readme: string | null },
): Promise<void> {
  const now = nowIso();
  await db.updateTable('projects').set({
    default_branch: r.defaultBranch, empty_repo: r.empty ? 1 : 0, readme_path: r.readme, last_activity_at: now, updated_at: now,
  }).where('id', '=', id).execute();
}

/** Which of `ids` turned instance runners off (shared_runners_enabled). */
export async function projectsWithoutSharedRunners(db: Db, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('projects').select('id').where('id', 'in', ids).where('shared_runners_enabled', '=', 0).execute();
  return new Set(rows.map((r) => r.id));
}

export async function deleteProjectRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('projects').where('id', '=', id).execute();
}

export function projectsInNamespaces(db: Db, namespaceIds: number[]) {
  return db.selectFrom('projects').selectAll().where('namespace_id', 'in', namespaceIds).where('pending_delete', '=', 0);
}

/** Projects the user owns directly (their personal namespace), for user deletion and `owned`. */
export async function personalProjectIds(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('projects.id').where('namespaces.kind', '=', 'user').where('namespaces.owner_id', '=', userId).execute();
  return rows.map((r) => r.id);
}

/** Where the repositories of the user's personal projects live, for the user's deletion. */
export function personalProjectRepositories(db: Db, userId: number): Promise<{
  id: number; repository_storage: string; disk_path: string;
}[]> {
  return db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['projects.id', 'projects.repository_storage', 'projects.disk_path'])
    .where('namespaces.kind', '=', 'user').where('namespaces.owner_id', '=', userId).execute();
}

/** How many projects a namespace holds (a user's personal project limit counts them). */
export async function countProjectsInNamespace(db: Db, namespaceId: number): Promise<number> {
  const row = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).where(
    'namespace_id', '=', namespaceId,
  ).executeTakeFirstOrThrow();
  return Number(row.n);
}
