/**
 * Finding the project or group a route names by `:id` (integer or URL-encoded full path), as the
 * viewer may see it: a missing project and one the viewer may not read answer the same 404
 * (`404 Project Not Found` / `404 Group Not Found`), so private names do not leak.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { param, prepared } from '../../db/prepared.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { Actor } from '../../domain/permissions/access.ts';
import { findProjectByIdOrPath } from '../../domain/projects/projects.queries.ts';
import { findNamespaceByFullPath, findNamespaceByIdOrPath, namespacePaths } from '../../domain/namespaces/namespaces.queries.ts';
import { groupActor, projectActor } from '../../domain/permissions/actors.ts';
import { canOnProject, type ProjectAction } from '../../domain/permissions/project.policy.ts';
import { canOnGroup, type GroupAction } from '../../domain/permissions/group.policy.ts';
import { forbidden, notFound } from '../errors.ts';
import type { NamespaceInfo } from '../entities/project.ts';

export interface ProjectContext {
  project: ProjectRow;
  namespace: NamespaceInfo;
  lineage: number[];
  actor: Actor;
}

/**
 * The project `idOrPath` names with its namespace and paths, remembered until the next write (as
 * user rows are, db/read-cache.ts): every project route starts here. Callers must not mutate it.
 */
function findProjectInNamespace(db: Kysely<DB>, idOrPath: string) {
  return cachedRead(db, `project:${idOrPath}`, async () => {
    const project = await findProjectByIdOrPath(db, idOrPath);
    if (!project) return null;
    const ns = await namespaceById.first(db, [project.namespace_id]);
    if (!ns) return null;
    const paths = (await namespacePaths(db, [ns])).get(ns.id)!;
    return { project, ns, paths };
  });
}

const namespaceById = prepared((db) => db.selectFrom('namespaces').selectAll().where('id', '=', param<number>(0)));

export async function loadProject(request: FastifyRequest, idOrPath: string): Promise<ProjectContext> {
  const found = await findVisibleProject(request.server.kiln.db, request.caller?.user ?? null, idOrPath);
  if (!found) throw notFound('Project');
  return found;
}

/**
 * The project `idOrPath` names (an old path of a moved project included) when `user` may read it,
 * else null: the one check behind the API's `:id` and the web interface's `/:namespace/:project`.
 */
export async function findVisibleProject(db: Kysely<DB>, user: UserRow | null, idOrPath: string): Promise<ProjectContext | null> {
  const found = await findProjectInNamespace(db, idOrPath);
  if (!found) return null;
  const { project, ns, paths } = found;
  const actor = await projectActor(db, user, project.id, paths.lineage);
  if (!canOnProject(actor, 'read_project', project)) return null;
  return { project, namespace: { namespace: ns, fullPath: paths.fullPath, fullName: paths.fullName }, lineage: paths.lineage, actor };
}

/** 403 `403 Forbidden` unless the actor may do `action` (the Service's `authorize!`). */
export function authorizeProject(ctx: ProjectContext, action: ProjectAction): void {
  if (!canOnProject(ctx.actor, action, ctx.project)) throw forbidden();
}

export interface GroupContext {
  group: NamespaceRow;
  fullPath: string;
  fullName: string;
  lineage: number[];
  actor: Actor;
}

export async function loadGroup(request: FastifyRequest, idOrPath: string): Promise<GroupContext> {
  const found = await findVisibleGroup(request.server.kiln.db, request.caller?.user ?? null, idOrPath);
  if (!found) throw notFound('Group');
  return found;
}

/** The group `idOrPath` names when `user` may read it, else null (API `:id` and the web's `/:group`). */
export async function findVisibleGroup(
  db: Kysely<DB>, user: UserRow | null, idOrPath: string, lookup: 'id_or_path' | 'path' = 'id_or_path',
): Promise<GroupContext | null> {
  // A page's path is always a path: a group named `123` is not the group of id 123 there.
  const group = lookup === 'path' ? await findNamespaceByFullPath(db, idOrPath) : await findNamespaceByIdOrPath(db, idOrPath);
  if (!group || group.kind !== 'group') return null;
  const paths = (await namespacePaths(db, [group])).get(group.id)!;
  const actor = await groupActor(db, user, paths.lineage);
  if (!canOnGroup(actor, 'read_group', group)) return null;
  return { group, fullPath: paths.fullPath, fullName: paths.fullName, lineage: paths.lineage, actor };
}

export function authorizeGroup(ctx: GroupContext, action: GroupAction): void {
  if (!canOnGroup(ctx.actor, action, ctx.group)) throw forbidden();
}
