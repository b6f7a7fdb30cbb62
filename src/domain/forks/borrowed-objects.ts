/**
 * Repositories that share objects with another through git alternates (gitrepository-layout:
 * `objects/info/alternates` names the object directory of the repository lent from). A fork's
 * repository starts as refs only, every object read from its source's store; what is pushed to
 * the fork afterwards is its own. The Service does the same with an object pool
 * (app/services/projects/fork_service.rb, ObjectPool); kiln lends the source's own store, and
 * keeps the one rule that makes it safe: before a repository others borrow from is removed or
 * left behind on a storage, every borrower either gets its own copy of the objects (`git repack
 * -a -d`, which packs what it reads through alternates too, then the alternates file goes) or is
 * pointed at the store's new place.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { runGit } from '../repositories/git-command.ts';
import { repositoryExists } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { borrowersOf, stopBorrowing } from './forks.queries.ts';

function alternatesFile(gitDir: string): string {
  return path.join(gitDir, 'objects', 'info', 'alternates');
}

/**
 * Makes `gitDir` read objects from `lenderGitDir`'s store (absolute: the file is read relative to
 * the objects directory otherwise). The lender stops pruning: an object its own refs left behind
 * (a force push, a deleted branch) may still be a borrower's, and `git gc --auto` after a push
 * would otherwise delete it once it is old enough (git-gc, gc.pruneExpire).
 */
export async function lendObjects(gitDir: string, lenderGitDir: string): Promise<void> {
  await runGit(['config', 'gc.pruneExpire', 'never'], { gitDir: lenderGitDir });
  await fs.mkdir(path.dirname(alternatesFile(gitDir)), { recursive: true });
  await fs.writeFile(alternatesFile(gitDir), `${path.resolve(lenderGitDir, 'objects')}\n`);
}

/** Whether `gitDir` reads objects from another store. */
export async function borrowsObjects(gitDir: string): Promise<boolean> {
  try {
    return (await fs.readFile(alternatesFile(gitDir), 'utf8')).trim() !== '';
  } catch {
    return false;
  }
}

/**
 * Gives `gitDir` its own copy of every object it reaches and stops it borrowing. The alternates
 * file goes only after the repack, and comes back if the repository is then not complete, so the
 * repository is usable at every step.
 */
export async function dissociate(gitDir: string): Promise<void> {
  const file = alternatesFile(gitDir);
  let alternates: string;
  try {
    alternates = await fs.readFile(file, 'utf8');
  } catch {
    return;
  }
  await runGit(['repack', '-a', '-d', '-q'], { gitDir });
  await fs.rm(file, { force: true });
  try {
    await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir });
  } catch (err) {
    await fs.writeFile(file, alternates);
    throw err;
  }
}

/**
 * Before the repository of project `lenderId` at `lenderGitDir` goes: each borrower gets its own
 * objects and its row stops naming the lender. Idempotent (a borrower already on its own, or
 * whose repository is not made yet, is only unmarked).
 */
export async function releaseBorrowers(db: Kysely<DB>, shards: StorageShard[], lenderId: number): Promise<void> {
  for (const b of await borrowersOf(db, lenderId)) {
    const gitDir = repositoryPath(shards, b.repository_storage, b.disk_path);
    if (await repositoryExists(gitDir)) await dissociate(gitDir);
    await stopBorrowing(db, b.id);
  }
}

/** After project `lenderId`'s repository moved to `newGitDir`: its borrowers read from there. */
export async function repointBorrowers(db: Kysely<DB>, shards: StorageShard[], lenderId: number, newGitDir: string): Promise<void> {
  for (const b of await borrowersOf(db, lenderId)) {
    const gitDir = repositoryPath(shards, b.repository_storage, b.disk_path);
    if (await borrowsObjects(gitDir)) await lendObjects(gitDir, newGitDir);
  }
}
