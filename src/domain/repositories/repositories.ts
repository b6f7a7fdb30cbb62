/**
 * Bare repositories on disk: create, remove, commit files with plumbing (hash-object, mktree,
 * commit-tree, update-ref), and read the refs a project needs to know after a push.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { runGit } from './git-command.ts';

/**
 * Why a write to a repository that is moving to another storage is refused (the Service's
 * GitAccess `read_only` message, which the git layer and the API both give).
 */
export const READ_ONLY_MESSAGE = 'The repository is temporarily read-only. Please try again later.';

/** The branch HEAD names in a new repository until a push says otherwise. */
export const INITIAL_BRANCH = 'main';

export async function createBareRepository(absPath: string): Promise<void> {
  await fs.mkdir(path.dirname(absPath), { recursive: true });
  await runGit(['init', '--bare', '--quiet', `--initial-branch=${INITIAL_BRANCH}`, absPath]);
}

export async function removeRepository(absPath: string): Promise<void> {
  await fs.rm(absPath, { recursive: true, force: true });
}

export async function repositoryExists(absPath: string): Promise<boolean> {
  try {
    return (await fs.stat(path.join(absPath, 'HEAD'))).isFile();
  } catch {
    return false;
  }
}

export interface CommitAuthor {
  name: string;
  email: string;
}

export interface FileToCommit {
  path: string;
  content: string;
}

/**
 * Writes `files` as the whole tree of a new commit on `branch` (a flat tree: snippet files and a
 * README have no directories) and moves the branch to it. Returns the commit id.
 */
export async function commitFiles(
  absPath: string, o: { branch: string; files: FileToCommit[]; message: string; author: CommitAuthor },
): Promise<string> {
  const entries: string[] = [];
  for (const file of o.files) {
    const { stdout } = await runGit(['hash-object', '-w', '--stdin'], { gitDir: absPath, input: file.content });
    entries.push(`100644 blob ${stdout.trim()}\t${file.path}`);
  }
  const { stdout: tree } = await runGit(['mktree'], { gitDir: absPath, input: `${entries.join('\n')}\n` });
  const ref = `refs/heads/${o.branch}`;
  const parent = (await runGit(['rev-parse', '--verify', '--quiet', ref], { gitDir: absPath, okExitCodes: [1] })).stdout.trim();
  const identity = {
    GIT_AUTHOR_NAME: o.author.name, GIT_AUTHOR_EMAIL: o.author.email,
    GIT_COMMITTER_NAME: o.author.name, GIT_COMMITTER_EMAIL: o.author.email,
  };
  const args = ['commit-tree', tree.trim(), ...(parent ? ['-p', parent] : [])];
  const { stdout: commit } = await runGit(args, { gitDir: absPath, input: `${o.message}\n`, env: identity });
  // The old value makes the update atomic against a concurrent push to the same branch.
  await runGit(['update-ref', ref, commit.trim(), parent || '0'.repeat(40)], { gitDir: absPath });
  return commit.trim();
}

export async function listBranches(absPath: string): Promise<string[]> {
  const { stdout } = await runGit(['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { gitDir: absPath });
  return stdout.split('\n').filter(Boolean);
}

/** The branch HEAD points at, whether or not it exists yet. */
export async function headBranch(absPath: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['symbolic-ref', '-q', '--short', 'HEAD'], { gitDir: absPath, okExitCodes: [1] });
  return exitCode === 0 ? stdout.trim() : null;
}

export async function setHeadBranch(absPath: string, branch: string): Promise<void> {
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: absPath });
}

/** The README file at the tip of `branch` (the first README-like name at the root), or null. */
export async function findReadme(absPath: string, branch: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['ls-tree', '--name-only', `refs/heads/${branch}`], { gitDir: absPath, okExitCodes: [128] });
  if (exitCode !== 0) return null;
  return stdout.split('\n').find((name) => /^readme(\.[a-z0-9]+)?$/i.test(name)) ?? null;
}

/**
 * What a project records about its repository after a write: its default branch (HEAD's branch
 * when it exists, else `preferred`, else the first branch, with HEAD moved there), whether it
 * is empty, and its README.
 */
export async function inspectRepository(absPath: string, preferred: string | null): Promise<{
  defaultBranch: string | null; empty: boolean; readme: string | null;
}> {
  const branches = await listBranches(absPath);
  if (branches.length === 0) return { defaultBranch: null, empty: true, readme: null };
  const head = await headBranch(absPath);
  let branch: string;
  if (preferred && branches.includes(preferred)) branch = preferred;
  else if (head && branches.includes(head)) branch = head;
  else branch = branches.includes('main') ? 'main' : branches.includes('master') ? 'master' : branches[0];
  if (head !== branch) await setHeadBranch(absPath, branch);
  return { defaultBranch: branch, empty: false, readme: await findReadme(absPath, branch) };
}
