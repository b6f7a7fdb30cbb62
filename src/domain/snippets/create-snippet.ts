/**
 * Writes of snippets, personal and of a project (Snippets::CreateService, Snippets::UpdateService,
 * Snippets::DestroyService): the row and the snippet's own bare repository `@snippets/<id>.git`
 * on the shard the storage weights pick, where every change of its files is one real commit on
 * `main` ("Initial commit", then "Update snippet"). The row keeps what presenting a snippet needs
 * without git: every file's path, and the first file's name and content (the Service's
 * `file_name_on_repo` and `/raw`).
 *
 * A commit the repository refuses (a file that exists or does not, a path git cannot hold, more
 * than MAX_SNIPPET_FILES files) is the Service's `repository` error: the Service's
 * SnippetRepository turns every such refusal into a CommitError, whose detail it does not show.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SnippetRow, SnippetsTable } from '../../db/tables/snippets.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteSnippetRow, findSnippetById, insertSnippet, updateSnippetRow } from './snippets.queries.ts';
import { deleteUserAgentDetail, recordUserAgentDetail, type RequestOrigin } from '../spam/user-agent-details.queries.ts';
import { lockContainers, type LockedContainer } from '../storage-moves/storage-moves.queries.ts';
import { pickStorage, repositoryPath } from '../repositories/storage.ts';
import { createBareRepository, INITIAL_BRANCH, removeRepository } from '../repositories/repositories.ts';
import { writeCommit, type CommitAction } from '../repositories/commit-actions.ts';
import { flatTree, readBlob } from '../repositories/git-read.ts';
import { normaliseFilePath } from '../repositories/file-paths.ts';
import { GitCommandError, runGit } from '../repositories/git-command.ts';
import type { RefUpdate } from '../repositories/project-repository.ts';
import {
  legacyUpdateAction, MAX_SNIPPET_FILES, MAX_SNIPPET_PATH, snippetFilePaths, toCommitActions, validAction, type SnippetFileAction,
} from './snippet-actions.ts';

/** The Service's default snippet_size_limit (50 MB): the first file's content is kept in the row. */
export const SNIPPET_CONTENT_MAX = 50 * 1024 * 1024;

export interface NewSnippet {
  title: string;
  description: string | null;
  visibilityLevel: number;
  /** `create` actions, at least one (the older `file_name` + `content` is one of them). */
  files: SnippetFileAction[];
  /** The project of a project snippet; absent for a personal one. */
  projectId?: number;
  /** Where the request came from, kept for administrators (user_agent_details). */
  origin?: RequestOrigin;
}

export interface SnippetChange {
  title?: string;
  description?: string;
  visibilityLevel?: number;
  /** The 15.2 form: actions on the snippet's files. */
  files?: SnippetFileAction[];
  /** The older form, for a snippet of one file. */
  fileName?: string;
  content?: string;
}

export type SnippetFailure =
  | 'not_found' | 'read_only' | 'repository' | 'invalid_actions' | 'multiple_files' | 'file_name_too_long';
export type SnippetWriteResult<T> = { ok: true; value: T } | { ok: false; reason: SnippetFailure };

function commitAuthor(user: UserRow) {
  return { name: user.name, email: user.commit_email || user.email };
}

const tooLong = (p: string | undefined) => p !== undefined && [...p].length > MAX_SNIPPET_PATH;

/** What the row keeps of a commit: the paths in repository (byte) order and the first file. */
interface Committed {
  update: RefUpdate;
  row: Pick<SnippetsTable, 'file_paths'> & Partial<Pick<SnippetsTable, 'file_name' | 'content'>>;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const normalised = (p: string) => {
  const r = normaliseFilePath(p);
  return r.ok ? r.path : null;
};

/** Writes the commit of `actions` (objects only) and reads back what the row keeps; null when refused. */
async function writeSnippetCommit(gitDir: string, editor: UserRow, actions: CommitAction[], message: string): Promise<Committed | null> {
  const identity = commitAuthor(editor);
  const written = await writeCommit(gitDir, {
    branch: INITIAL_BRANCH, force: false, message, author: identity, committer: identity, actions,
  });
  if (!written.ok) return null;
  const tree = await flatTree(gitDir, written.commitId);
  // Gitlab::Checks::PushFileCountCheck with Snippet.max_file_limit, run by the commit's hooks.
  if (tree.size > MAX_SNIPPET_FILES) return null;
  const paths = [...tree.keys()].sort(byteOrder);
  if (paths.length === 0) return { update: written.update, row: { file_paths: '[]' } };
  // The first file's content: as sent when this commit wrote it, else read back.
  const sent = actions.findLast((a) => a.content !== undefined && a.action !== 'delete' && normalised(a.filePath) === paths[0])?.content;
  const first = sent ?? await readBlob(gitDir, tree.get(paths[0])!.id, SNIPPET_CONTENT_MAX);
  return { update: written.update, row: { file_paths: JSON.stringify(paths), file_name: paths[0], content: first.toString('utf8') } };
}

/** Moves `main` to the new commit if it still has its old value. */
async function publish(gitDir: string, u: RefUpdate): Promise<boolean> {
  try {
    await runGit(['update-ref', u.ref, u.after, u.before], { gitDir });
    return true;
  } catch (err) {
    if (err instanceof GitCommandError) return false;
    throw err;
  }
}

export async function createSnippet(
  db: Kysely<DB>, shards: StorageShard[], author: UserRow, input: NewSnippet,
): Promise<SnippetWriteResult<SnippetRow>> {
  if (input.files.some((f) => tooLong(f.filePath))) return { ok: false, reason: 'file_name_too_long' };
  if (!input.files.every((f) => validAction(f, ['create']))) return { ok: false, reason: 'invalid_actions' };
  const storage = await pickStorage(db, shards);
  // The row first, named by the first file as the Service's create_params do; the commit then says what is first.
  const snippet = await db.transaction().execute((trx) => insertSnippet(trx, {
    title: input.title, description: input.description, file_name: input.files[0].filePath ?? '', content: input.files[0].content ?? '',
    author_id: author.id, visibility_level: input.visibilityLevel, repository_storage: storage, project_id: input.projectId ?? null,
  }));
  const absPath = repositoryPath(shards, storage, snippet.disk_path);
  const undo = async () => {
    await removeRepository(absPath);
    await deleteSnippetRow(db, snippet.id);
  };
  try {
    await createBareRepository(absPath);
    const committed = await writeSnippetCommit(absPath, author, toCommitActions(input.files, []), 'Initial commit');
    if (!committed || !(await publish(absPath, committed.update))) {
      await undo();
      return { ok: false, reason: 'repository' };
    }
    const created = await db.transaction().execute(async (trx) => {
      if (input.origin) await recordUserAgentDetail(trx, 'Snippet', snippet.id, input.origin);
      return updateSnippetRow(trx, snippet.id, committed.row);
    });
    return { ok: true, value: created };
  } catch (err) {
    await undo();
    throw err;
  }
}

/**
 * Changes a snippet. A change of its files commits to the snippet's repository, so it is refused
 * while the repository is read-only for a move; the check, the commit and the row are one
 * transaction holding the snippet's row (`lockContainers`), so no commit can land after a move
 * has copied the repository. That lock also makes concurrent edits of one snippet commit one
 * after the other. The commit comes before the row, so the row never describes files the
 * repository lacks.
 */
export async function updateSnippet(
  db: Kysely<DB>, shards: StorageShard[], editor: UserRow, id: number, change: SnippetChange,
): Promise<SnippetWriteResult<SnippetRow>> {
  const legacy = change.fileName !== undefined || change.content !== undefined;
  const commits = change.files !== undefined || legacy;
  if (tooLong(change.fileName) || change.files?.some((f) => tooLong(f.filePath) || tooLong(f.previousPath))) {
    return { ok: false, reason: 'file_name_too_long' };
  }
  return db.transaction().execute(async (trx): Promise<SnippetWriteResult<SnippetRow>> => {
    if (commits && (await lockContainers(trx, 'snippet', [id])).some((c) => c.read_only === 1)) return { ok: false, reason: 'read_only' };
    const snippet = await findSnippetById(trx, id);
    if (!snippet) return { ok: false, reason: 'not_found' };
    let files: Partial<Committed['row']> = {};
    if (commits) {
      const existing = snippetFilePaths(snippet);
      // API::Helpers::SnippetsHelpers#validate_params_for_multiple_files, then the service's valid_params?.
      if (legacy && existing.length > 1) return { ok: false, reason: 'multiple_files' };
      if (change.files && !change.files.every((f) => validAction(f))) return { ok: false, reason: 'invalid_actions' };
      const actions = change.files ?? [legacyUpdateAction(existing[0] ?? null, change.fileName, change.content)].filter((a) => a !== null);
      if (actions.length > 0) {
        const gitDir = repositoryPath(shards, snippet.repository_storage, snippet.disk_path);
        const committed = await writeSnippetCommit(gitDir, editor, toCommitActions(actions, existing), 'Update snippet');
        if (!committed || !(await publish(gitDir, committed.update))) return { ok: false, reason: 'repository' };
        files = committed.row;
      }
    }
    const updated = await updateSnippetRow(trx, id, {
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.visibilityLevel !== undefined ? { visibility_level: change.visibilityLevel } : {}),
      ...files,
    });
    return { ok: true, value: updated };
  });
}

/**
 * Deletes a snippet and its repository, refused while the repository is read-only: removing it
 * mid-move would leave the copy on the destination behind, or remove the source from under it.
 * The row goes in the transaction that locked it, with the repository where that row said.
 */
type DeleteRefusal = { ok: false; reason: 'not_found' | 'read_only' };

export async function deleteSnippet(db: Kysely<DB>, shards: StorageShard[], id: number): Promise<{ ok: true } | DeleteRefusal> {
  const found = await db.transaction().execute(async (trx): Promise<{ ok: true; value: LockedContainer } | DeleteRefusal> => {
    const [locked] = await lockContainers(trx, 'snippet', [id]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' };
    await deleteSnippetRow(trx, id);
    await deleteUserAgentDetail(trx, 'Snippet', id);
    return { ok: true, value: locked };
  });
  if (!found.ok) return found;
  await removeRepository(repositoryPath(shards, found.value.repository_storage, found.value.disk_path));
  return { ok: true };
}
