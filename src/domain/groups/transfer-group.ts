/**
 * Moves a group below another group or to the top level (the Service's Groups::TransferService):
 * its checks in the Service's order, then in one transaction the new parent, the visibility
 * lowered to the new parent's when it was above it (and with it the sub-groups' and projects'
 * above that level, update_children_and_projects_visibility), a redirect route for every project
 * below the group from its old full path, and, moved to the top level without a direct owner,
 * the caller as Owner (ensure_ownership). Paths stay unique by the namespaces' unique index and
 * namespace_child_paths (a sub-group and a project of one parent share one path space).
 */
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { countOwners, insertMember } from '../members/members.queries.ts';
import { descendantGroupIds, namespacePaths, pathTaken } from '../namespaces/namespaces.queries.ts';
import { recordMove } from '../projects/redirect-routes.queries.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { capTreeVisibility, groupRows, moveGroupRow, projectPathTakenIn, projectPlaces } from './groups.queries.ts';

/** Groups::TransferService::ERROR_MESSAGES (those kiln can meet), after "Transfer failed: ". */
export const GROUP_TRANSFER_ERRORS = {
  alreadyRoot: 'Group is already a root group.',
  sameParent: 'Group is already associated to the parent group.',
  policies: "You don't have enough permissions.",
  samePath: 'The parent group already has a subgroup or a project with the same path.',
  toSubgroup: 'Cannot transfer group to one of its subgroup.',
} as const;

export type TransferGroupResult = { ok: true; group: NamespaceRow } | { ok: false; error: string };

export async function transferGroup(db: Kysely<DB>, group: NamespaceRow, o: {
  newParent: NamespaceRow | null; user: UserRow;
  /** valid_policies?: create_subgroup in the new parent, or create_group for the top level. */
  allowed: boolean;
}): Promise<TransferGroupResult> {
  const fail = (message: string): TransferGroupResult => ({ ok: false, error: `Transfer failed: ${message}` });
  const { newParent } = o;
  if (!newParent && group.parent_id === null) return fail(GROUP_TRANSFER_ERRORS.alreadyRoot);
  if (newParent && newParent.id === group.parent_id) return fail(GROUP_TRANSFER_ERRORS.sameParent);
  if (!o.allowed) return fail(GROUP_TRANSFER_ERRORS.policies);
  const samePath = await pathTaken(db, newParent?.id ?? null, group.path)
    || (newParent !== null && await projectPathTakenIn(db, newParent.id, group.path));
  if (samePath) return fail(GROUP_TRANSFER_ERRORS.samePath);
  const below = [...(await descendantGroupIds(db, [group.id])).keys()];
  if (newParent && (newParent.id === group.id || below.includes(newParent.id))) return fail(GROUP_TRANSFER_ERRORS.toSubgroup);

  const paths = await namespacePaths(db, newParent ? [group, newParent] : [group]);
  const oldPrefix = paths.get(group.id)!.fullPath;
  const newPrefix = newParent ? `${paths.get(newParent.id)!.fullPath}/${group.path}` : group.path;
  const treeIds = [group.id, ...below];
  try {
    const moved = await db.transaction().execute(async (trx) => {
      const projects = await projectPlaces(trx, treeIds);
      const projectPaths = await namespacePaths(trx, await groupRows(trx, treeIds));
      const level = newParent ? Math.min(group.visibility_level, newParent.visibility_level) : group.visibility_level;
      const row = await moveGroupRow(trx, group.id, newParent?.id ?? null, level);
      if (level < group.visibility_level) await capTreeVisibility(trx, treeIds, level);
      for (const p of projects) {
        const oldPath = `${projectPaths.get(p.namespace_id)!.fullPath}/${p.path}`;
        await recordMove(trx, p.id, oldPath, `${newPrefix}${oldPath.slice(oldPrefix.length)}`);
      }
      if (!newParent && await countOwners(trx, group.id) === 0) {
        await insertMember(trx, {
          sourceType: 'Namespace', sourceId: group.id, userId: o.user.id, accessLevel: ACCESS_LEVELS.owner, createdById: o.user.id,
        });
      }
      return row;
    });
    return { ok: true, group: moved };
  } catch (err) {
    if (isUniqueViolation(err)) return fail(GROUP_TRANSFER_ERRORS.samePath);
    throw err;
  }
}
