/**
 * Moves a project to another namespace (the Service's Projects::TransferService): in one
 * transaction the row is locked, the name and path checked free in the target, the namespace
 * changed (the visibility lowered to a group's when it was above it,
 * `update_namespace_and_visibility`), the old full path kept as a redirect route, and the owner
 * of a personal target namespace made the project's Owner (kiln holds a personal namespace's
 * ownership as a membership, as createProject does). Inherited access follows the new namespace
 * by itself: it is read from the namespace's groups at each check. The repository stays where it
 * is on disk: its path there was fixed at creation and is independent of the project's full path.
 */
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { findMember, insertMember, updateMember } from '../members/members.queries.ts';
import { lockContainers } from '../storage-moves/storage-moves.queries.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { takenInNamespace, updateProjectRow } from './projects.queries.ts';
import { recordMove } from './redirect-routes.queries.ts';

/** TransferService's messages (its allowed_transfer? refuses the project's own namespace too). */
export const TRANSFER_ERRORS = {
  taken: 'Project with same name or path in target namespace already exists',
  notAllowed: 'Transfer failed, please contact an admin.',
} as const;

export type TransferProjectResult = { ok: true; project: ProjectRow } | { ok: false; error: string };

export async function transferProject(
  db: Kysely<DB>, project: ProjectRow, o: { namespace: NamespaceRow; namespaceFullPath: string; oldFullPath: string; userId: number },
): Promise<TransferProjectResult> {
  const target = o.namespace;
  if (target.id === project.namespace_id) return { ok: false, error: TRANSFER_ERRORS.notAllowed };
  try {
    return await db.transaction().execute(async (trx): Promise<TransferProjectResult> => {
      const [locked] = await lockContainers(trx, 'project', [project.id]);
      if (!locked) return { ok: false, error: TRANSFER_ERRORS.notAllowed };
      const taken = await takenInNamespace(trx, target.id, project.name, project.path);
      if (taken.name || taken.path) return { ok: false, error: TRANSFER_ERRORS.taken };
      const visibility = target.kind === 'group' ? Math.min(project.visibility_level, target.visibility_level) : project.visibility_level;
      const row = await updateProjectRow(trx, project.id, { namespace_id: target.id, visibility_level: visibility });
      await recordMove(trx, project.id, o.oldFullPath, `${o.namespaceFullPath}/${project.path}`);
      if (target.kind === 'user' && target.owner_id !== null) {
        const member = await findMember(trx, 'Project', project.id, target.owner_id);
        if (!member) {
          await insertMember(trx, {
            sourceType: 'Project', sourceId: project.id, userId: target.owner_id, accessLevel: ACCESS_LEVELS.owner, createdById: o.userId,
          });
        } else if (member.access_level < ACCESS_LEVELS.owner) {
          await updateMember(trx, member.id, { accessLevel: ACCESS_LEVELS.owner, expiresAt: null });
        }
      }
      return { ok: true, project: row };
    });
  } catch (err) {
    // Another project took the path in the meantime (namespace_child_paths, projects' unique path).
    if (isUniqueViolation(err)) return { ok: false, error: TRANSFER_ERRORS.taken };
    throw err;
  }
}
