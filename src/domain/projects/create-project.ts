/**
 * Creates a project with its bare repository (Projects::CreateService): validates name and path,
 * picks the storage shard, inserts the row (and, in a personal namespace, the owner's membership)
 * in one transaction, then creates the repository, optionally with a README commit.
 */
import { syncProjectTopics } from '../topics/topics.queries.ts';
import { recordEvent } from '../events/events.queries.ts';
import { isValidRefName } from '../repositories/ref-name.ts';
import { protectDefaultBranch } from '../protected-refs/protected-refs.ts';
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { Updateable } from 'kysely';
import type { ProjectRow, ProjectsTable } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { ACCESS_LEVELS, visibilityName } from '../permissions/access.ts';
import { diskEntry, projectNameError, projectPathError } from '../namespaces/paths.ts';
import { insertMember } from '../members/members.queries.ts';
import { insertProject, takenInNamespace, updateProjectRow } from './projects.queries.ts';
import { pickStorage, repositoryPath } from '../repositories/storage.ts';
import {
  commitFiles, createBareRepository, INITIAL_BRANCH, removeRepository, repositoryExists, setHeadBranch,
} from '../repositories/repositories.ts';
import { isUniqueViolation } from '../../db/constraints.ts';

export type FieldErrors = Record<string, string[]>;

export interface CreateProjectInput {
  creator: UserRow;
  namespace: NamespaceRow;
  namespaceFullPath: string;
  name: string;
  path: string;
  description: string | null;
  visibilityLevel: number;
  defaultBranch: string | null;
  initializeWithReadme: boolean;
  /** The project's other attributes (project-attributes.ts), checked already. */
  attributes?: Updateable<ProjectsTable>;
  /** An administrator's choice of shard; a weighted pick otherwise. */
  storage?: string;
}

export type CreateProjectResult = { ok: true; project: ProjectRow } | { ok: false; errors: FieldErrors };

export function addError(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

/** Projects may not be more visible than the group that holds them (Project#visibility_level_allowed_by_group). */
export function visibilityAllowedIn(namespace: NamespaceRow, level: number): string | null {
  if (namespace.kind !== 'group' || level <= namespace.visibility_level) return null;
  return `${visibilityName(level)} is not allowed in a ${visibilityName(namespace.visibility_level)} group.`;
}

export async function createProject(db: Kysely<DB>, shards: StorageShard[], input: CreateProjectInput): Promise<CreateProjectResult> {
  const errors: FieldErrors = {};
  const nameError = projectNameError(input.name);
  if (nameError) addError(errors, 'name', nameError);
  const pathError = projectPathError(input.path);
  if (pathError) addError(errors, 'path', pathError);
  const visibilityError = visibilityAllowedIn(input.namespace, input.visibilityLevel);
  if (visibilityError) addError(errors, 'visibility_level', visibilityError);
  // HEAD is pointed at it with git: a name git refuses must not reach the command line.
  if (input.defaultBranch !== null && !isValidRefName(input.defaultBranch)) addError(errors, 'default_branch', 'is invalid');
  const unknownStorage = input.storage !== undefined && !shards.some((s) => s.name === input.storage);
  if (unknownStorage) addError(errors, 'repository_storage', 'is not included in the list');
  if (Object.keys(errors).length === 0) {
    const taken = await takenInNamespace(db, input.namespace.id, input.name, input.path);
    if (taken.name) addError(errors, 'name', 'has already been taken');
    if (taken.path) addError(errors, 'path', 'has already been taken');
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const storage = input.storage ?? await pickStorage(db, shards);
  // The repository keeps the path it was created at; a name left behind by a renamed project
  // gets a suffix instead of colliding with the old directory.
  let diskPath = `${input.namespaceFullPath}/${diskEntry(input.path, '.git')}`;
  if (await repositoryExists(repositoryPath(shards, storage, diskPath))) {
    diskPath = `${input.namespaceFullPath}/${diskEntry(`${input.path}-${crypto.randomBytes(4).toString('hex')}`, '.git')}`;
  }

  let project: ProjectRow;
  try {
    project = await db.transaction().execute(async (trx) => {
      const row = await insertProject(trx, {
        ...input.attributes,
        name: input.name, path: input.path, namespace_id: input.namespace.id, creator_id: input.creator.id,
        description: input.description, visibility_level: input.visibilityLevel, default_branch: null,
        repository_storage: storage, disk_path: diskPath,
      });
      // The owner of a personal namespace owns its projects as a member (Projects::CreateService#add_members).
      if (input.namespace.kind === 'user' && input.namespace.owner_id !== null) {
        await insertMember(trx, {
          sourceType: 'Project', sourceId: row.id, userId: input.namespace.owner_id,
          accessLevel: ACCESS_LEVELS.owner, createdById: input.creator.id,
        });
      }
      // EventCreateService#create_project: the creator's 'created' event, without a target.
      await recordEvent(trx, { project_id: row.id, author_id: input.creator.id, action: 'created', target_type: null, target_id: null });
      const topics = input.attributes?.topics;
      if (typeof topics === 'string' && topics !== '[]') row.topics = await syncProjectTopics(trx, row.id, JSON.parse(topics) as string[]);
      return row;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, errors: { path: ['has already been taken'] } };
  }

  const absPath = repositoryPath(shards, storage, diskPath);
  try {
    await createBareRepository(absPath);
    const branch = input.defaultBranch ?? INITIAL_BRANCH;
    if (branch !== INITIAL_BRANCH) await setHeadBranch(absPath, branch);
    if (input.initializeWithReadme) {
      await commitFiles(absPath, {
        branch,
        files: [{ path: 'README.md', content: `# ${input.name}\n\n${input.description ?? ''}\n`.replace(/\n\n\n$/, '\n') }],
        message: 'Initial commit',
        author: { name: input.creator.name, email: input.creator.commit_email || input.creator.email },
      });
      project = await updateProjectRow(db, project.id, { default_branch: branch, empty_repo: 0, readme_path: 'README.md' });
      // The README's commit created the default branch: Projects::ProtectDefaultBranchService protects it.
      await protectDefaultBranch(db, project);
    }
  } catch (err) {
    await removeRepository(absPath);
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', project.id).execute();
      await trx.deleteFrom('projects').where('id', '=', project.id).execute();
    });
    throw err;
  }
  return { ok: true, project };
}
