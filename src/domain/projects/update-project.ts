/**
 * Changes a project's attributes (Projects::UpdateService): name and path keep their rules and
 * uniqueness, the default branch must exist in the repository (HEAD follows it; refused while
 * the repository moves to another storage), and the visibility may not exceed the group's. A
 * new path keeps the old full path as a redirect route (Route#create_redirect_for_old_path).
 */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import type { ProjectRow, ProjectsTable } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { projectNameError, projectPathError } from '../namespaces/paths.ts';
import { takenInNamespace, updateProjectRow } from './projects.queries.ts';
import { addError, visibilityAllowedIn, type FieldErrors } from './create-project.ts';
import { findReadme, listBranches, setHeadBranch } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { lockContainers } from '../storage-moves/storage-moves.queries.ts';
import { syncProjectTopics } from '../topics/topics.queries.ts';
import { recordMove } from './redirect-routes.queries.ts';

export interface UpdateProjectInput {
  name?: string;
  path?: string;
  description?: string | null;
  defaultBranch?: string;
  visibilityLevel?: number;
  /** The project's other attributes (project-attributes.ts), checked already; written with the rest. */
  attributes?: Omit<Updateable<ProjectsTable>, 'id' | 'created_at'>;
  /** The namespace's full path: with a new path, the old full path redirects to the project. */
  namespaceFullPath?: string;
}

export type UpdateProjectResult =
  | { ok: true; project: ProjectRow }
  | { ok: false; reason: 'invalid'; errors: FieldErrors }
  | { ok: false; reason: 'default_branch' }
  | { ok: false; reason: 'read_only' }
  | { ok: false; reason: 'not_found' };

export async function updateProject(
  db: Kysely<DB>, shards: StorageShard[], project: ProjectRow, namespace: NamespaceRow,
  input: UpdateProjectInput,
): Promise<UpdateProjectResult> {
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

  const set = {
    ...input.attributes,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.path !== undefined ? { path: input.path } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.visibilityLevel !== undefined ? { visibility_level: input.visibilityLevel } : {}),
  };
  const moved = input.path !== undefined && input.path !== project.path && input.namespaceFullPath !== undefined
    ? { from: `${input.namespaceFullPath}/${project.path}`, to: `${input.namespaceFullPath}/${input.path}` } : null;
  const write = async (trx: Transaction<DB>, values: typeof set) => {
    const row = await writeProjectRow(trx, project.id, values);
    if (moved) await recordMove(trx, project.id, moved.from, moved.to);
    return row;
  };
  try {
    if (input.defaultBranch === undefined || input.defaultBranch === project.default_branch) {
      return { ok: true, project: await db.transaction().execute((trx) => write(trx, set)) };
    }
    return await changeDefaultBranch(db, shards, project.id, input.defaultBranch, set, write);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, reason: 'invalid', errors: { path: ['has already been taken'] } };
  }
}

/**
 * A new default branch moves the repository's HEAD, which a move would lose: refused while the
 * repository is read-only, and checked, written and recorded in one transaction holding the
 * project's row (`lockContainers`), so no move can copy the repository in between. HEAD moves
 * last, once the row is written (a taken path rolls back before the repository is touched).
 */
async function changeDefaultBranch(
  db: Kysely<DB>, shards: StorageShard[], id: number, branch: string,
  set: Omit<Updateable<ProjectsTable>, 'id' | 'created_at'>,
  write: (trx: Transaction<DB>, values: Omit<Updateable<ProjectsTable>, 'id' | 'created_at'>) => Promise<ProjectRow>,
): Promise<UpdateProjectResult> {
  return db.transaction().execute(async (trx): Promise<UpdateProjectResult> => {
    const [locked] = await lockContainers(trx, 'project', [id]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' };
    const absPath = repositoryPath(shards, locked.repository_storage, locked.disk_path);
    if (!(await listBranches(absPath)).includes(branch)) return { ok: false, reason: 'default_branch' };
    const readme = await findReadme(absPath, branch);
    const updated = await write(trx, { ...set, default_branch: branch, readme_path: readme });
    await setHeadBranch(absPath, branch);
    return { ok: true, project: updated };
  });
}

/** The row's new values, and its topics' links when the topics change (one transaction). */
async function writeProjectRow(
  trx: Transaction<DB>, id: number, set: Omit<Updateable<ProjectsTable>, 'id' | 'created_at'>,
): Promise<ProjectRow> {
  const row = await updateProjectRow(trx, id, set);
  if (typeof set.topics === 'string') row.topics = await syncProjectTopics(trx, id, JSON.parse(set.topics) as string[]);
  return row;
}
