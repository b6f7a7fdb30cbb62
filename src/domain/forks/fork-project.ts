/**
 * Forking (the Service's Projects::ForkService and RepositoryForkWorker): the request makes the
 * fork's row — named and placed as asked, no more visible than its source or its group, with its
 * source's settings, the fork relationship, membership of the source's fork network and
 * `import_status: scheduled` — and queues the job
 * that makes its repository. The job creates a bare repository that borrows every object from the
 * source's (borrowed-objects.ts: alternates, never a copy of the objects), copies the source's
 * branches and tags and HEAD, checks it is complete, and marks the import `finished` (or `failed`
 * with the reason, when its runs are given up).
 */
import crypto from 'node:crypto';
import type { Kysely, Updateable } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { ProjectRow, ProjectsTable } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { diskEntry, projectNameError, projectPathError } from '../namespaces/paths.ts';
import { insertMember } from '../members/members.queries.ts';
import { recordEvent } from '../events/events.queries.ts';
import { findProjectById, insertProject, takenInNamespace, updateProjectRow } from '../projects/projects.queries.ts';
import { addError, type FieldErrors } from '../projects/create-project.ts';
import { createBareRepository, inspectRepository, removeRepository, repositoryExists } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { runGit } from '../repositories/git-command.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { findForkRow, insertForkRow, joinForkNetwork, setImportState } from './forks.queries.ts';
import { lendObjects } from './borrowed-objects.ts';

export const FORK_REPOSITORY_JOB = 'forks.create_repository';

export interface ForkPayload {
  projectId: number;
}

/** What a fork does not take from its source's row: its identity, place, state and repository. */
const OWN_COLUMNS = new Set<string>([
  'id', 'name', 'path', 'namespace_id', 'creator_id', 'description', 'visibility_level', 'default_branch', 'readme_path',
  'archived', 'repository_storage', 'disk_path', 'read_only', 'empty_repo', 'pending_delete', 'import_status', 'import_error',
  'objects_from_project_id', 'last_activity_at', 'created_at', 'updated_at', 'topics', 'container_expiration_policy',
  'mr_default_target_self',
]);

export interface ForkInput {
  source: ProjectRow;
  creator: UserRow;
  namespace: NamespaceRow;
  namespaceFullPath: string;
  name?: string;
  path?: string;
  description?: string;
  visibilityLevel?: number;
  mrDefaultTargetSelf?: boolean;
}

export type ForkResult = { ok: true; project: ProjectRow } | { ok: false; errors: FieldErrors };

/**
 * ForkService#target_visibility_level: the lowest of the source's, the one asked for and the
 * target group's.
 */
export function forkVisibility(source: ProjectRow, namespace: NamespaceRow, asked: number | undefined): number {
  const levels = [source.visibility_level];
  if (asked !== undefined) levels.push(asked);
  if (namespace.kind === 'group') levels.push(namespace.visibility_level);
  return Math.min(...levels);
}

export async function forkProject(db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], input: ForkInput): Promise<ForkResult> {
  const { source } = input;
  const name = input.name ?? source.name;
  const path = input.path ?? source.path;
  const errors: FieldErrors = {};
  const nameError = projectNameError(name);
  if (nameError) addError(errors, 'name', nameError);
  const pathError = projectPathError(path);
  if (pathError) addError(errors, 'path', pathError);
  if (Object.keys(errors).length === 0) {
    const taken = await takenInNamespace(db, input.namespace.id, name, path);
    if (taken.name) addError(errors, 'name', 'has already been taken');
    if (taken.path) addError(errors, 'path', 'has already been taken');
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  // The fork lives on its source's shard: it reads the source's objects from there.
  const storage = source.repository_storage;
  let diskPath = `${input.namespaceFullPath}/${diskEntry(path, '.git')}`;
  if (await repositoryExists(repositoryPath(shards, storage, diskPath))) {
    diskPath = `${input.namespaceFullPath}/${diskEntry(`${path}-${crypto.randomBytes(4).toString('hex')}`, '.git')}`;
  }
  const inherited: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (!OWN_COLUMNS.has(key)) inherited[key] = value;

  try {
    const project = await db.transaction().execute(async (trx) => {
      const row = await insertProject(trx, {
        ...(inherited as Updateable<ProjectsTable>),
        name, path, namespace_id: input.namespace.id, creator_id: input.creator.id,
        description: input.description ?? source.description,
        visibility_level: forkVisibility(source, input.namespace, input.visibilityLevel),
        default_branch: source.default_branch, empty_repo: source.empty_repo, readme_path: source.readme_path,
        repository_storage: storage, disk_path: diskPath,
        import_status: 'scheduled', objects_from_project_id: source.id,
        mr_default_target_self: input.mrDefaultTargetSelf ? 1 : 0,
      });
      if (input.namespace.kind === 'user' && input.namespace.owner_id !== null) {
        await insertMember(trx, {
          sourceType: 'Project', sourceId: row.id, userId: input.namespace.owner_id,
          accessLevel: ACCESS_LEVELS.owner, createdById: input.creator.id,
        });
      }
      await recordEvent(trx, { project_id: row.id, author_id: input.creator.id, action: 'created', target_type: null, target_id: null });
      await insertForkRow(trx, row.id, source.id);
      await joinForkNetwork(trx, row.id, source.id);
      await jobs.enqueue(FORK_REPOSITORY_JOB, { projectId: row.id } satisfies ForkPayload, { trx });
      return row;
    });
    jobs.wake();
    return { ok: true, project };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, errors: { path: ['has already been taken'] } };
  }
}

/**
 * The job. Idempotent: a finished fork is left alone; a repository left half-made by a run that
 * died is made again from the start.
 */
export async function createForkRepository(db: Kysely<DB>, shards: StorageShard[], payload: ForkPayload): Promise<void> {
  const project = await findProjectById(db, payload.projectId);
  if (!project || project.import_status === 'finished') return;
  const fork = await findForkRow(db, project.id);
  const source = fork?.forked_from_project_id ? await findProjectById(db, fork.forked_from_project_id) : undefined;
  if (!source || project.objects_from_project_id !== source.id) {
    await setImportState(db, project.id, 'failed', 'The source project was removed before its fork was made');
    return;
  }
  await setImportState(db, project.id, 'started', null);
  const gitDir = repositoryPath(shards, project.repository_storage, project.disk_path);
  const sourceDir = repositoryPath(shards, source.repository_storage, source.disk_path);
  await removeRepository(gitDir);
  await createBareRepository(gitDir);
  await lendObjects(gitDir, sourceDir);
  const { stdout } = await runGit(
    ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/tags/'], { gitDir: sourceDir },
  );
  const refs = stdout.split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]);
  if (refs.length > 0) {
    const script = ['start', ...refs.map(([oid, ref]) => `create ${ref} ${oid}`), 'prepare', 'commit', ''].join('\n');
    await runGit(['update-ref', '--stdin'], { gitDir, input: script });
  }
  await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir });
  const state = await inspectRepository(gitDir, source.default_branch);
  await updateProjectRow(db, project.id, {
    default_branch: state.defaultBranch ?? source.default_branch, empty_repo: state.empty ? 1 : 0, readme_path: state.readme,
    import_status: 'finished', import_error: null,
  });
}

/** When the job's runs are given up: the import failed, with the last error. */
export async function forkRepositoryGaveUp(db: Kysely<DB>, payload: ForkPayload, lastError: string): Promise<void> {
  await setImportState(db, payload.projectId, 'failed', lastError.slice(0, 1000));
}
