/**
 * DELETE /users/:id and reject (spec, Users; reference §1.7). Guards first: each may refuse the
 * deletion with a 409 message. Then, in one transaction, a soft delete hands the user's
 * contributions to the ghost user (created on demand, just before) before the account goes; a hard delete
 * removes them with it, and with them the groups the user solely owns (their sub-groups and
 * projects too). The account takes its personal namespace's projects and its snippets along
 * (foreign keys), and the membership rows of everything removed go in the same transaction.
 * Only after the commit are the repositories of all of it (projects, snippets, group wikis)
 * and the avatar removed from disk, as DELETE /projects/:id does; and as there, the deletion is
 * refused (409) while one of those repositories is read-only for a storage move.
 *
 * Other areas extend the two tables below: a guard for what must block a deletion, a
 * contribution mover for rows that outlive their author.
 */
import { releaseBorrowers } from '../forks/borrowed-objects.ts';
import { closeForkRequests } from '../merge-requests/close-fork-requests.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteGroupsWithProjects, groupTrees } from '../groups/groups.queries.ts';
import { deleteMembersOf, groupsSolelyOwnedBy } from '../members/members.queries.ts';
import { reassignPipelinesAndJobs } from '../pipelines/pipelines.queries.ts';
import { reassignIssues } from '../issues/issue-writes.queries.ts';
import { reassignMergeRequests } from '../merge-requests/merge-requests.queries.ts';
import { personalProjectRepositories } from '../projects/projects.queries.ts';
import { removeRepository } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { moveProjectSnippets, snippetsByAuthor } from '../snippets/snippets.queries.ts';
import { hasDeployKeys, moveDeployKeysToUser } from '../deploy-keys/deploy-keys.queries.ts';
import { lockContainers, type ContainerKind } from '../storage-moves/storage-moves.queries.ts';
import { removeAvatar } from './avatar.ts';
import { ensureGhostUser } from './ghost-user.ts';
import { moveNotesToUser } from '../notes/notes.queries.ts';
import { moveAwardsToUser } from '../award-emoji/award-emoji.queries.ts';
import { USER_TYPES } from './user-kind.ts';
import { deleteUserRow } from './users.queries.ts';

export interface DeleteOptions {
  /** Delete contributions (and solely owned groups) instead of moving them to the ghost user. */
  hardDelete: boolean;
  /** Host of the instance, for the ghost user's email. */
  host: string;
  /** KILN_DATA_DIR, where the user's avatar file is removed from. */
  dataDir: string;
  /** KILN_STORAGES, where the removed repositories live. */
  shards: StorageShard[];
  /**
   * Who deletes: as each project's deletion does (Users::DestroyService destroys the personal
   * projects with Projects::DestroyService), the open requests from the projects that go into
   * projects that stay are closed by them (delete-project.ts).
   */
  actorId?: number;
}

type Refusal = { reason: 'forbidden' } | { reason: 'conflict'; message: string };
type DeleteGuard = (db: Kysely<DB>, user: UserRow, opts: DeleteOptions) => Promise<Refusal | null>;
type ContributionMover = (trx: Transaction<DB>, from: UserRow, ghost: UserRow) => Promise<void>;

const GUARDS: DeleteGuard[] = [
  // The ghost user holds every deleted user's contributions; it cannot be removed (UserPolicy).
  async (_db, user) => (user.user_type === USER_TYPES.ghost ? { reason: 'forbidden' } : null),
  // A group must keep an owner: its sole owner can only go with hard_delete (reference §1.7).
  async (db, user, opts) => (!opts.hardDelete && (await groupsSolelyOwnedBy(db, user.id)).length > 0
    ? { reason: 'conflict', message: 'User cannot be removed while is the sole-owner of a group' }
    : null),
];

/**
 * Rows authored by the user that must survive a soft delete, re-pointed at the ghost user
 * (Users::MigrateToGhostUserService). Personal snippets, keys, emails, tokens and memberships
 * are the user's own and go with the account. On a hard delete the foreign keys that outlive
 * the user (pipelines, jobs, project creators) are cleared instead.
 */
const CONTRIBUTION_MOVERS: ContributionMover[] = [
  // Pipelines and jobs the user started stay with their projects, started by the ghost user.
  (trx, from, ghost) => reassignPipelinesAndJobs(trx, from.id, ghost.id),
  // Comments stay in their threads and emoji reactions on what they reward, the ghost user's now.
  (trx, from, ghost) => moveNotesToUser(trx, from.id, ghost.id),
  (trx, from, ghost) => moveAwardsToUser(trx, from.id, ghost.id),
  // Issues they opened (and closed) stay in their projects, the ghost user's.
  (trx, from, ghost) => reassignIssues(trx, from.id, ghost.id),
  // Merge requests they opened stay in their projects, the ghost user's (migrate_merge_requests).
  (trx, from, ghost) => reassignMergeRequests(trx, from.id, ghost.id),
  // Project snippets stay with their projects (migrate_snippets); only personal ones go with the account.
  (trx, from, ghost) => moveProjectSnippets(trx, from.id, ghost.id),
];

/** A repository to remove from disk once the rows naming it are gone. */
interface RepositoryLocation {
  storage: string;
  diskPath: string;
  /** A project's repository: forks borrowing its objects get their own first. */
  projectId?: number;
}

/** A repository left on disk because removing it failed; the rows are gone all the same. */
export interface LeftoverRepository extends RepositoryLocation {
  error: unknown;
}

export type DeleteUserResult = { ok: true; leftovers: LeftoverRepository[] } | ({ ok: false } & Refusal);

/** A container of the user's being moved to another storage: the whole deletion rolls back. */
class RepositoryReadOnly extends Error {}

export const READ_ONLY_REFUSAL = 'User cannot be removed while a repository of theirs is temporarily read-only. Please try again later.';

/**
 * Locks the containers whose repositories go with the user and answers where those are now;
 * refused (RepositoryReadOnly) if one is read-only for a move, which would otherwise copy a
 * repository removed under it, or leave its copy behind. Held until the transaction ends, the
 * locks keep a move from being scheduled in between (`lockContainers`).
 */
async function lockRepositories(trx: Transaction<DB>, kind: ContainerKind, ids: number[]): Promise<RepositoryLocation[]> {
  const locked = await lockContainers(trx, kind, ids);
  if (locked.some((c) => c.read_only === 1)) throw new RepositoryReadOnly();
  return locked.map((c) => ({ storage: c.repository_storage, diskPath: c.disk_path, ...(kind === 'project' ? { projectId: c.id } : {}) }));
}

/**
 * Deletes the rows that go with the user besides those their foreign keys cascade to, and
 * answers which repositories they named.
 */
async function deleteOwnedContainers(trx: Transaction<DB>, user: UserRow, opts: DeleteOptions): Promise<RepositoryLocation[]> {
  const projects = await personalProjectRepositories(trx, user.id);
  const snippets = await snippetsByAuthor(trx, user.id).execute();
  const repositories: RepositoryLocation[] = [
    ...await lockRepositories(trx, 'project', projects.map((p) => p.id)),
    ...await lockRepositories(trx, 'snippet', snippets.map((s) => s.id)),
  ];
  const trees: Awaited<ReturnType<typeof groupTrees>> = opts.hardDelete
    ? await groupTrees(trx, await groupsSolelyOwnedBy(trx, user.id)) : { groups: [], projects: [] };
  const going = [...projects.map((p) => p.id), ...trees.projects.map((p) => p.id)];
  if (opts.actorId !== undefined) {
    for (const id of going) await closeForkRequests(trx, id, opts.actorId, { into: false, goingToo: going });
  }
  // Other users' memberships of the personal projects (the projects go with the namespace).
  await deleteMembersOf(trx, 'Project', projects.map((p) => p.id));
  if (opts.hardDelete) {
    repositories.push(
      ...await lockRepositories(trx, 'project', trees.projects.map((p) => p.id)),
      // Groups with a wiki: the only ones with a repository.
      ...await lockRepositories(trx, 'group', trees.groups.map((g) => g.id)),
    );
    await deleteGroupsWithProjects(trx, trees.groups.map((g) => g.id), trees.projects.map((p) => p.id));
  }
  return repositories;
}

/** One at a time, so a user with many projects does not open as many removals at once. */
async function removeRepositories(
  db: Kysely<DB>, shards: StorageShard[], repositories: RepositoryLocation[],
): Promise<LeftoverRepository[]> {
  const leftovers: LeftoverRepository[] = [];
  for (const r of repositories) {
    try {
      // Forks of the project that borrow its objects get their own before it goes.
      if (r.projectId !== undefined) await releaseBorrowers(db, shards, r.projectId);
      await removeRepository(repositoryPath(shards, r.storage, r.diskPath));
    } catch (error) {
      leftovers.push({ ...r, error });
    }
  }
  return leftovers;
}

export async function deleteUser(db: Kysely<DB>, user: UserRow, opts: DeleteOptions): Promise<DeleteUserResult> {
  for (const guard of GUARDS) {
    const refusal = await guard(db, user, opts);
    if (refusal) return { ok: false, ...refusal };
  }
  // Created (if need be) and committed before the deletion: deletions running at once share it.
  const ghost = opts.hardDelete ? null : await ensureGhostUser(db, opts.host);
  // Deploy keys they created keep serving their projects whichever the deletion (User has_many
  // :deploy_keys, dependent: :nullify; DeployKey#user is then the ghost user).
  const deployKeysTo = ghost ?? (await hasDeployKeys(db, user.id) ? await ensureGhostUser(db, opts.host) : null);
  let repositories: RepositoryLocation[];
  try {
    repositories = await db.transaction().execute(async (trx) => {
      if (ghost) {
        for (const move of CONTRIBUTION_MOVERS) await move(trx, user, ghost);
      }
      if (deployKeysTo) await moveDeployKeysToUser(trx, user.id, deployKeysTo.id);
      const doomed = await deleteOwnedContainers(trx, user, opts);
      await deleteUserRow(trx, user.id);
      return doomed;
    });
  } catch (err) {
    if (err instanceof RepositoryReadOnly) return { ok: false, reason: 'conflict', message: READ_ONLY_REFUSAL };
    throw err;
  }
  const leftovers = await removeRepositories(db, opts.shards, repositories);
  await removeAvatar(opts.dataDir, user.id);
  return { ok: true, leftovers };
}
