/**
 * One real git commit from a list of file actions (the Service's POST /projects/:id/repository/
 * commits and the single-file writes of the repository files API; Commits::CreateService and
 * Files::MultiService): create, update, delete, move and chmod, applied in order, with their
 * checks and messages.
 *
 * Plumbing only, no working tree: the base commit's files are listed once (`ls-tree -r`) and the
 * actions are checked against that listing as it changes; new contents are written with
 * `hash-object -w`; a temporary index (GIT_INDEX_FILE) is filled from the base with `read-tree`
 * and changed with one `update-index --index-info`; `write-tree` and `commit-tree` make the
 * commit; `update-ref` with the branch's old value publishes it (project-repository.ts).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { runGit } from './git-command.ts';
import { branchTips, flatTree, hasBranches, lastCommitFor, resolveCommit } from './git-read.ts';
import { COMMIT_ID, validRefName, ZERO_ID } from './ref-names.ts';
import { normaliseFilePath } from './file-paths.ts';
import { updateRefs, type ProjectRepository, type RefUpdate } from './project-repository.ts';
import { ActionError, fail, Files, mustBeFile, mustExist, mustNotExist } from './commit-files.ts';

export const COMMIT_ACTIONS = ['create', 'delete', 'move', 'update', 'chmod'] as const;
export type CommitActionName = (typeof COMMIT_ACTIONS)[number];

/** At most this many actions in one commit: each new content is one git process. */
export const MAX_ACTIONS = 1000;

export interface CommitAction {
  action: CommitActionName;
  filePath: string;
  previousPath?: string;
  /** The new content, already decoded (text or base64). */
  content?: Buffer;
  executeFilemode?: boolean;
  lastCommitId?: string;
}

export interface Identity {
  name: string;
  email: string;
}

export interface CommitRequest {
  branch: string;
  startBranch?: string;
  startSha?: string;
  force: boolean;
  message: string;
  author: Identity;
  committer: Identity;
  actions: CommitAction[];
}

export type CommitResult =
  | { ok: true; commitId: string; update: RefUpdate }
  | { ok: false; reason: 'invalid'; message: string }
  | { ok: false; reason: 'read_only' };

function cleanPath(raw: string): string {
  const r = normaliseFilePath(raw);
  if (!r.ok) fail(r.message);
  return (r as { path: string }).path;
}

/** Where the commit starts from and what the branch's old value is. */
async function resolveBase(gitDir: string, req: CommitRequest): Promise<{ base: string | null; old: string }> {
  if (!validRefName(req.branch)) fail(`Something went wrong when we tried to create '${req.branch}' for you: Branch name is invalid`);
  if (req.startSha !== undefined && req.startBranch !== undefined) fail("You can't pass both start_branch and start_sha");
  const startBranch = req.startSha !== undefined ? undefined : (req.startBranch ?? req.branch);
  const tips = await branchTips(gitDir, [req.branch, ...(startBranch !== undefined && validRefName(startBranch) ? [startBranch] : [])]);
  const empty = tips.size === 0 && !(await hasBranches(gitDir));
  let startSha: string | null = null;
  if (req.startSha !== undefined) {
    if (!COMMIT_ID.test(req.startSha)) fail(`Invalid start_sha '${req.startSha}'`);
    startSha = await resolveCommit(gitDir, req.startSha);
    if (!startSha) fail(`Cannot find start_sha '${req.startSha}'`);
  }
  const startTip = startBranch !== undefined ? tips.get(startBranch) ?? null : null;
  if (startBranch !== undefined && !empty && !startTip) fail('You can only create or edit files when you are on a branch');
  const current = tips.get(req.branch) ?? null;
  const different = startBranch !== req.branch || req.startSha !== undefined;
  if (!empty && different && current && !req.force) {
    fail(`A branch called '${req.branch}' already exists. Switch to that branch in order to make changes`);
  }
  return { base: startSha ?? startTip, old: current ?? ZERO_ID };
}

/** git refuses identities with angle brackets or line breaks; they cannot be written, so drop them. */
export function identityPart(s: string): string {
  const cleaned = s.replace(/[<>\x00-\x1f\x7f]/g, '').trim();
  return cleaned === '' ? 'unknown' : cleaned;
}

/**
 * Writes the new contents as blobs with one `hash-object -w --stdin-paths` (one git process for
 * any number of files, instead of one each) and answers their ids in order.
 */
async function writeBlobs(gitDir: string, dir: string, contents: Buffer[]): Promise<string[]> {
  if (contents.length === 0) return [];
  const paths = contents.map((_, i) => path.join(dir, `blob-${i}`));
  await Promise.all(contents.map((c, i) => fs.writeFile(paths[i], c)));
  const { stdout } = await runGit(['hash-object', '-w', '--no-filters', '--stdin-paths'], { gitDir, input: `${paths.join('\n')}\n` });
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length !== contents.length || !ids.every((id) => COMMIT_ID.test(id))) {
    throw new Error('git hash-object answered an unexpected list');
  }
  return ids;
}

/** Stands for the id of the n-th new content until writeBlobs knows it (never a real object id). */
const pendingId = (n: number) => `pending-${n}`;

/**
 * Checks and applies the actions to `files`; returns the index lines that change the base, with
 * pendingId(n) where `contents[n]` is to be written.
 */
async function applyActions(
  gitDir: string, base: string | null, files: Files, actions: CommitAction[], contents: Buffer[],
): Promise<[string, string | null][]> {
  const changes = new Map<string, string | null>();
  const put = async (p: string, mode: string, content: Buffer | undefined, keepId?: string) => {
    const id = content !== undefined ? pendingId(contents.push(content) - 1) : keepId!;
    files.set(p, { mode, id });
    changes.set(p, `${mode} ${id}`);
  };
  const remove = (p: string) => {
    files.delete(p);
    changes.set(p, null);
  };
  const modeFor = (execute: boolean | undefined, current?: string) =>
    execute === undefined ? (current ?? '100644') : execute ? '100755' : '100644';

  for (const a of actions) {
    const filePath = cleanPath(a.filePath);
    if (base === null && a.action !== 'create') fail(`No files to ${a.action}.`);
    if (a.lastCommitId !== undefined && base !== null && a.action !== 'create') {
      const checked = a.action === 'move' && a.previousPath !== undefined ? cleanPath(a.previousPath) : filePath;
      if ((await lastCommitFor(gitDir, base, checked)) !== a.lastCommitId) {
        fail(`The file has changed since you started editing it: ${checked}`);
      }
    }
    switch (a.action) {
      case 'create':
        mustNotExist(files, filePath);
        await put(filePath, modeFor(a.executeFilemode), a.content ?? Buffer.alloc(0));
        break;
      case 'update': {
        const entry = mustBeFile(files, filePath);
        await put(filePath, modeFor(a.executeFilemode, entry.mode), a.content ?? Buffer.alloc(0));
        break;
      }
      case 'delete':
        mustExist(files, filePath);
        remove(filePath);
        break;
      case 'chmod': {
        const entry = mustBeFile(files, filePath);
        if (a.executeFilemode === undefined) fail('You must specify execute_filemode to change a file mode.');
        await put(filePath, modeFor(a.executeFilemode, entry.mode), undefined, entry.id);
        break;
      }
      case 'move': {
        if (a.previousPath === undefined) fail(`You must supply the original file path when moving file \`${filePath}\`.`);
        const from = cleanPath(a.previousPath!);
        const entry = mustExist(files, from);
        if (from !== filePath) {
          remove(from);
          mustNotExist(files, filePath);
        }
        await put(filePath, modeFor(a.executeFilemode, entry.mode), a.content, entry.id);
        break;
      }
    }
  }
  return [...changes];
}

export type WrittenCommit = { ok: true; commitId: string; update: RefUpdate } | { ok: false; reason: 'invalid'; message: string };

/**
 * Writes the commit of `req` into the repository at `gitDir` (objects only, unreachable until a
 * ref names them) and answers the update that would publish it; moving the ref is the caller's
 * (commitActions for a project; a snippet moves its own under its row's lock).
 */
export async function writeCommit(gitDir: string, req: CommitRequest): Promise<WrittenCommit> {
  let tmp: string | null = null;
  try {
    const { base, old } = await resolveBase(gitDir, req);
    const files = new Files(base ? await flatTree(gitDir, base) : new Map());
    const contents: Buffer[] = [];
    const changes = await applyActions(gitDir, base, files, req.actions, contents);
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-index-'));
    const ids = await writeBlobs(gitDir, tmp, contents);
    const lines = changes.map(([p, line]) => {
      const resolved = line === null ? `0 ${ZERO_ID}` : line.replace(/pending-(\d+)$/, (_, n: string) => ids[Number(n)]);
      return `${resolved}\t${p}\0`;
    });
    const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
    if (base) await runGit(['read-tree', base], { gitDir, env });
    else await runGit(['read-tree', '--empty'], { gitDir, env });
    await runGit(['update-index', '-z', '--index-info'], { gitDir, env, input: lines.join('') });
    const tree = (await runGit(['write-tree'], { gitDir, env })).stdout.trim();
    const identity = {
      GIT_AUTHOR_NAME: identityPart(req.author.name), GIT_AUTHOR_EMAIL: identityPart(req.author.email),
      GIT_COMMITTER_NAME: identityPart(req.committer.name), GIT_COMMITTER_EMAIL: identityPart(req.committer.email),
    };
    // The message exactly as given, read from standard input (the Service's commit writer
    // passes it to commit-tree with -F -): no newline added, so `message` reads back unchanged.
    const commit = (await runGit(['commit-tree', tree, ...(base ? ['-p', base] : [])], {
      gitDir, env: identity, input: req.message,
    })).stdout.trim();
    return { ok: true, commitId: commit, update: { ref: `refs/heads/${req.branch}`, before: old, after: commit } };
  } catch (err) {
    if (err instanceof ActionError) return { ok: false, reason: 'invalid', message: err.message };
    throw err;
  } finally {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }
}

export async function commitActions(db: Kysely<DB>, repo: ProjectRepository, req: CommitRequest): Promise<CommitResult> {
  const written = await writeCommit(repo.gitDir, req);
  if (!written.ok) return written;
  const r = await updateRefs(db, repo, [written.update]);
  if (r.ok) return written;
  if (r.reason === 'stale') {
    return { ok: false, reason: 'invalid', message: `Could not update refs/heads/${req.branch}. Please refresh and try again.` };
  }
  return { ok: false, reason: 'read_only' };
}
