/**
 * A project's wiki repository (the Service's ProjectWiki, app/models/wiki.rb): a bare git
 * repository of its own, cloned at `<project>.wiki.git`.
 *
 * Where it lives: inside the directory of the project's repository, as `kiln-wiki.git` (git
 * ignores a directory it does not know in a bare repository). So the wiki goes wherever the
 * project's repository goes, in the same step: a storage move copies and renames that one
 * directory (storage-moves/run-move.ts), and every removal of a project's repository (a project,
 * a group or a user deleted) removes its wiki with it. Writes to the wiki are the project's
 * repository writes: locked on the project's row and refused while it is read-only for a move.
 *
 * Created when first needed (Wiki#wiki calls create_wiki_repository on every use), never while
 * the project is read-only for a move: the copy being made must not change under it.
 */
import path from 'node:path';
import type { StorageShard } from '../../config/schema.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { createBareRepository, INITIAL_BRANCH, repositoryExists } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { runGit } from '../repositories/git-command.ts';
import { validRefName } from '../repositories/ref-names.ts';
import type { ProjectRepository } from '../repositories/project-repository.ts';

export const WIKI_DIR = 'kiln-wiki.git';

/** The wiki's path relative to its shard, from the project's. */
export function wikiDiskPath(projectDiskPath: string): string {
  return `${projectDiskPath}/${WIKI_DIR}`;
}

type ProjectPlace = Pick<ProjectRow, 'id' | 'repository_storage' | 'disk_path'>;

/**
 * The wiki as API writes see it: refs move through `updateRefs` on the project's row (its storage
 * and disk path are the project's, so a move finished in between refuses the write), objects go
 * to the wiki's directory.
 */
export function wikiRepository(shards: StorageShard[], project: ProjectPlace): ProjectRepository {
  return {
    projectId: project.id, storage: project.repository_storage, diskPath: project.disk_path,
    gitDir: path.join(repositoryPath(shards, project.repository_storage, project.disk_path), WIKI_DIR),
  };
}

/** Creates the wiki's repository when it does not exist yet; false when it cannot be now (read-only). */
export async function ensureWikiRepository(
  shards: StorageShard[], project: ProjectPlace & Pick<ProjectRow, 'read_only'>,
): Promise<boolean> {
  const { gitDir } = wikiRepository(shards, project);
  if (await repositoryExists(gitDir)) return true;
  if (project.read_only === 1) return false;
  // The project's repository directory must exist: a wiki never creates it.
  if (!(await repositoryExists(repositoryPath(shards, project.repository_storage, project.disk_path)))) return false;
  await createBareRepository(gitDir);
  return true;
}

/**
 * The branch the wiki's pages are read from and written to (Wiki#default_branch: the
 * repository's root ref, else the instance's default branch name): HEAD's branch when it exists,
 * else `main`, `master` or the first branch a push created, else the initial branch.
 */
export async function wikiBranch(gitDir: string): Promise<string> {
  const head = await runGit(['symbolic-ref', '-q', '--short', 'HEAD'], { gitDir, okExitCodes: [1, 128] });
  const headName = head.exitCode === 0 ? head.stdout.trim() : '';
  const { stdout } = await runGit(['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { gitDir });
  const branches = stdout.split('\n').filter(Boolean);
  if (headName && branches.includes(headName)) return headName;
  for (const name of [INITIAL_BRANCH, 'master']) if (branches.includes(name)) return name;
  if (branches.length > 0 && validRefName(branches[0])) return branches[0];
  return headName && validRefName(headName) ? headName : INITIAL_BRANCH;
}
