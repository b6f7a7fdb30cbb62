/**
 * Changes a group's attributes (Groups::UpdateService): name and path keep the rules of their
 * creation (create-group.ts) and the path its uniqueness among its siblings (the unique index
 * namespaces_path_lower decides a race); the visibility may exceed neither the parent group's nor
 * fall below that of a sub-group or a project inside (the Service's
 * visibility_level_allowed_by_parent / _by_sub_groups / _by_projects validations, with their
 * messages). Repositories keep their disk paths, which were fixed at creation, so a new path moves
 * no repository: the git layer finds them by the rows' full paths.
 */
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import { visibilityName } from '../permissions/access.ts';
import { groupNameError, namespacePathError } from '../namespaces/paths.ts';
import { findNamespaceById, pathTaken } from '../namespaces/namespaces.queries.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { addError, type FieldErrors } from '../projects/create-project.ts';
import { highestChildVisibility, updateGroupRow } from './groups.queries.ts';

/** Namespace#name, #path (255) and #description (255) length limits of the Service. */
export const GROUP_NAME_MAX = 255;
export const GROUP_PATH_MAX = 255;
export const GROUP_DESCRIPTION_MAX = 255;

export interface UpdateGroupInput {
  name?: string;
  path?: string;
  description?: string;
  visibilityLevel?: number;
}

export type UpdateGroupResult = { ok: true; group: NamespaceRow } | { ok: false; errors: FieldErrors } | { ok: false; notFound: true };

const tooLong = (max: number) => `is too long (maximum is ${max} characters)`;

/** Length problems of group attributes, shared by creation and update. */
export function groupLengthErrors(input: { name?: string; path?: string; description?: string }): FieldErrors {
  const errors: FieldErrors = {};
  if (input.name !== undefined && input.name.length > GROUP_NAME_MAX) addError(errors, 'name', tooLong(GROUP_NAME_MAX));
  if (input.path !== undefined && input.path.length > GROUP_PATH_MAX) addError(errors, 'path', tooLong(GROUP_PATH_MAX));
  if (input.description !== undefined && input.description.length > GROUP_DESCRIPTION_MAX) addError(
    errors, 'description', tooLong(GROUP_DESCRIPTION_MAX),
  );
  // PostgreSQL text cannot hold a NUL byte; no description needs one.
  else if (input.description?.includes('\0')) addError(errors, 'description', 'is invalid');
  return errors;
}

export async function updateGroup(db: Kysely<DB>, group: NamespaceRow, input: UpdateGroupInput): Promise<UpdateGroupResult> {
  const errors = groupLengthErrors(input);
  if (input.name !== undefined && !errors.name) {
    const e = groupNameError(input.name);
    if (e) addError(errors, 'name', e);
  }
  if (input.path !== undefined && !errors.path) {
    const e = namespacePathError(input.path, group.parent_id === null);
    if (e) addError(errors, 'path', e);
    else if (input.path.toLowerCase() !== group.path.toLowerCase() && (await pathTaken(db, group.parent_id, input.path))) addError(
      errors, 'path', 'has already been taken',
    );
  }
  const level = input.visibilityLevel;
  if (level !== undefined && level !== group.visibility_level) {
    const name = visibilityName(level);
    const parent = group.parent_id === null ? undefined : await findNamespaceById(db, group.parent_id);
    if (parent && level > parent.visibility_level) {
      addError(
        errors, 'visibility_level',
        `${name} is not allowed since the parent group has a ${visibilityName(parent.visibility_level)} visibility.`,
      );
    }
    const children = await highestChildVisibility(db, group.id);
    if (children.projects > level) {
      addError(errors, 'visibility_level', `${name} is not allowed since this group contains projects with higher visibility.`);
    }
    if (children.groups > level) {
      addError(errors, 'visibility_level', `${name} is not allowed since there are sub-groups with higher visibility.`);
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  try {
    const updated = await updateGroupRow(db, group.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.path !== undefined ? { path: input.path } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(level !== undefined ? { visibility_level: level } : {}),
    });
    return updated ? { ok: true, group: updated } : { ok: false, notFound: true };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, errors: { path: ['has already been taken'] } };
  }
}
