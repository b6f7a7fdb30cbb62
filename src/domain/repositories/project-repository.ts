/**
 * A project's repository as API writes see it, and the one way they move its refs: objects are
 * written first, outside any transaction (unreachable until a ref names them, so harmless if the
 * write is then refused); the ref update itself runs while the project's row is locked
 * (`lockContainers`, the rule of src/domain/repository-writes/), refused while the repository is
 * read-only for a storage move and when the row no longer names the repository the objects went
 * to (a move finished in between). `git update-ref` is given the old value, so a concurrent push
 * or API write to the same ref makes this one fail instead of losing the other.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { lockContainers } from '../storage-moves/storage-moves.queries.ts';
import { GitCommandError, runGit } from './git-command.ts';
import { repositoryPath } from './storage.ts';
import { ZERO_ID } from './ref-names.ts';

export interface ProjectRepository {
  projectId: number;
  storage: string;
  diskPath: string;
  gitDir: string;
}

export function projectRepository(
  shards: StorageShard[], project: Pick<ProjectRow, 'id' | 'repository_storage' | 'disk_path'>,
): ProjectRepository {
  return {
    projectId: project.id, storage: project.repository_storage, diskPath: project.disk_path,
    gitDir: repositoryPath(shards, project.repository_storage, project.disk_path),
  };
}

export interface RefUpdate {
  /** The full ref name (`refs/heads/main`). */
  ref: string;
  /** The old value (ZERO_ID: the ref must not exist). */
  before: string;
  /** The new value (ZERO_ID: delete the ref). */
  after: string;
}

export type RefUpdateResult = { ok: true } | { ok: false; reason: 'read_only' | 'not_found' | 'stale' };

/**
 * Applies `updates` atomically (`update-ref --stdin` in one transaction: all or none), each only
 * if its ref still has its `before` value.
 */
export async function updateRefs(db: Kysely<DB>, repo: ProjectRepository, updates: RefUpdate[]): Promise<RefUpdateResult> {
  return db.transaction().execute(async (trx): Promise<RefUpdateResult> => {
    const [locked] = await lockContainers(trx, 'project', [repo.projectId]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1 || locked.repository_storage !== repo.storage || locked.disk_path !== repo.diskPath) {
      return { ok: false, reason: 'read_only' };
    }
    const script = [
      'start',
      ...updates.map((u) => (u.after === ZERO_ID ? `delete ${u.ref} ${u.before}` : `update ${u.ref} ${u.after} ${u.before}`)),
      'prepare', 'commit', '',
    ].join('\n');
    try {
      await runGit(['update-ref', '--stdin'], { gitDir: repo.gitDir, input: script });
    } catch (err) {
      // git refuses when a ref moved since it was read (or exists when it must not).
      if (err instanceof GitCommandError) return { ok: false, reason: 'stale' };
      throw err;
    }
    return { ok: true };
  });
}
