/**
 * Creates a personal snippet (Snippets::CreateService): the row, then its own bare repository
 * `@snippets/<id>.git` on the shard the storage weights pick, holding the file as a real commit
 * on `main`. A failure to write the repository removes the row again.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteSnippetRow, findSnippetById, insertSnippet, updateSnippetRow } from './snippets.queries.ts';
import { lockContainers, type LockedContainer } from '../storage-moves/storage-moves.queries.ts';
import { pickStorage, repositoryPath } from '../repositories/storage.ts';
import { commitFiles, createBareRepository, INITIAL_BRANCH, removeRepository } from '../repositories/repositories.ts';

export interface SnippetFileInput {
  title: string;
  description: string | null;
  fileName: string;
  content: string;
  visibilityLevel: number;
}

/** A file name that is a plain path inside the repository (no traversal, no git metadata). */
export function snippetFileNameError(fileName: string): string | null {
  if (fileName === '' || fileName.includes('/') || fileName === '.' || fileName === '..' || fileName === '.git' || /[\0\n\r\t]/.test(fileName)) {
    return 'is invalid';
  }
  return null;
}

function commitAuthor(user: UserRow) {
  return { name: user.name, email: user.commit_email || user.email };
}

export async function createSnippet(db: Kysely<DB>, shards: StorageShard[], author: UserRow, input: SnippetFileInput): Promise<SnippetRow> {
  const storage = await pickStorage(db, shards);
  const snippet = await db.transaction().execute((trx) => insertSnippet(trx, {
    title: input.title, description: input.description, file_name: input.fileName, content: input.content,
    author_id: author.id, visibility_level: input.visibilityLevel, repository_storage: storage,
  }));
  const absPath = repositoryPath(shards, storage, snippet.disk_path);
  try {
    await createBareRepository(absPath);
    await commitFiles(absPath, { branch: INITIAL_BRANCH, files: [{ path: input.fileName, content: input.content }], message: 'Initial commit', author: commitAuthor(author) });
  } catch (err) {
    await removeRepository(absPath);
    await deleteSnippetRow(db, snippet.id);
    throw err;
  }
  return snippet;
}

export type SnippetWriteResult<T> = { ok: true; value: T } | { ok: false; reason: 'read_only' | 'not_found' };

/**
 * Changes a snippet. A change naming `fileName` or `content` commits to the snippet's repository
 * (the Service's committable attributes), so it is refused while the repository is read-only
 * for a move; the check, the commit and the row are one transaction holding the snippet's row
 * (`lockContainers`), so no commit can land after a move has copied the repository. That lock
 * also makes concurrent edits of one snippet commit one after the other. The commit comes
 * before the row, so the row never describes content the repository lacks.
 */
export async function updateSnippet(db: Kysely<DB>, shards: StorageShard[], editor: UserRow, id: number, change: Partial<SnippetFileInput>): Promise<SnippetWriteResult<SnippetRow>> {
  const commits = change.fileName !== undefined || change.content !== undefined;
  return db.transaction().execute(async (trx): Promise<SnippetWriteResult<SnippetRow>> => {
    if (commits && (await lockContainers(trx, 'snippet', [id])).some((c) => c.read_only === 1)) return { ok: false, reason: 'read_only' };
    const snippet = await findSnippetById(trx, id);
    if (!snippet) return { ok: false, reason: 'not_found' };
    const fileName = change.fileName ?? snippet.file_name;
    const content = change.content ?? snippet.content;
    if (fileName !== snippet.file_name || content !== snippet.content) {
      await commitFiles(repositoryPath(shards, snippet.repository_storage, snippet.disk_path), {
        branch: INITIAL_BRANCH, files: [{ path: fileName, content }], message: `Update ${fileName}`, author: commitAuthor(editor),
      });
    }
    const updated = await updateSnippetRow(trx, id, {
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.fileName !== undefined ? { file_name: change.fileName } : {}),
      ...(change.content !== undefined ? { content: change.content } : {}),
      ...(change.visibilityLevel !== undefined ? { visibility_level: change.visibilityLevel } : {}),
    });
    return { ok: true, value: updated };
  });
}

/**
 * Deletes a snippet and its repository, refused while the repository is read-only: removing it
 * mid-move would leave the copy on the destination behind, or remove the source from under it.
 * The row goes in the transaction that locked it, with the repository where that row said.
 */
export async function deleteSnippet(db: Kysely<DB>, shards: StorageShard[], id: number): Promise<SnippetWriteResult<null>> {
  const found = await db.transaction().execute(async (trx): Promise<SnippetWriteResult<LockedContainer>> => {
    const [locked] = await lockContainers(trx, 'snippet', [id]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' };
    await deleteSnippetRow(trx, id);
    return { ok: true, value: locked };
  });
  if (!found.ok) return found;
  await removeRepository(repositoryPath(shards, found.value.repository_storage, found.value.disk_path));
  return { ok: true, value: null };
}
