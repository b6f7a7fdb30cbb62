/**
 * Changes a project's attributes (Projects::UpdateService): name and path keep their rules and
 * uniqueness, the default branch must exist in the repository (HEAD follows it), and the
 * visibility may not exceed the group's.
 */
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { projectNameError, projectPathError } from '../namespaces/paths.ts';
import { takenInNamespace, updateProjectRow } from './projects.queries.ts';
import { addError, visibilityAllowedIn, type FieldErrors } from './create-project.ts';
import { findReadme, listBranches, setHeadBranch } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { isUniqueViolation } from '../../db/constraints.ts';

export interface UpdateProjectInput {
  name?: string;
  path?: string;
  description?: string | null;
  defaultBranch?: string;
  visibilityLevel?: number;
}

export type UpdateProjectResult =
  | { ok: true; project: ProjectRow }
  | { ok: false; reason: 'invalid'; errors: FieldErrors }
  | { ok: false; reason: 'default_branch' };

export async function updateProject(db: Kysely<DB>, shards: StorageShard[], project: ProjectRow, namespace: NamespaceRow, input: UpdateProjectInput): Promise<UpdateProjectResult> {
  const errors: FieldErrors = {};
  const name = input.name ?? project.name;
  const path = input.path ?? project.path;
  if (input.name !== undefined) {
    const e = projectNameError(input.name);
    if (e) addError(errors, 'name', e);
  }
  if (input.path !== undefined) {
    const e = projectPathError(input.path);
    if (e) addError(errors, 'path', e);
  }
  if (input.visibilityLevel !== undefined) {
    const e = visibilityAllowedIn(namespace, input.visibilityLevel);
    if (e) addError(errors, 'visibility_level', e);
  }
  if (Object.keys(errors).length === 0 && (input.name !== undefined || input.path !== undefined)) {
    const taken = await takenInNamespace(db, project.namespace_id, name, path, project.id);
    if (taken.name) addError(errors, 'name', 'has already been taken');
    if (taken.path) addError(errors, 'path', 'has already been taken');
  }
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };

  let readme: string | null | undefined;
  if (input.defaultBranch !== undefined && input.defaultBranch !== project.default_branch) {
    const absPath = repositoryPath(shards, project.repository_storage, project.disk_path);
    if (!(await listBranches(absPath)).includes(input.defaultBranch)) return { ok: false, reason: 'default_branch' };
    await setHeadBranch(absPath, input.defaultBranch);
    readme = await findReadme(absPath, input.defaultBranch);
  }
  try {
    const updated = await updateProjectRow(db, project.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.path !== undefined ? { path: input.path } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.visibilityLevel !== undefined ? { visibility_level: input.visibilityLevel } : {}),
      ...(readme !== undefined ? { default_branch: input.defaultBranch, readme_path: readme } : {}),
    });
    return { ok: true, project: updated };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, reason: 'invalid', errors: { path: ['has already been taken'] } };
  }
}
