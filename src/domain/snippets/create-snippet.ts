/**
 * Creates a personal snippet (Snippets::CreateService): the row, then its own bare repository
 * `@snippets/<id>.git` on the shard the storage weights pick, holding the file as a real commit
 * on `main`. A failure to write the repository removes the row again.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteSnippetRow, insertSnippet, updateSnippetRow } from './snippets.queries.ts';
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

/** Commits the changed file first, so the row never describes content the repository lacks. */
export async function updateSnippet(db: Kysely<DB>, shards: StorageShard[], editor: UserRow, snippet: SnippetRow, change: Partial<SnippetFileInput>): Promise<SnippetRow> {
  const fileName = change.fileName ?? snippet.file_name;
  const content = change.content ?? snippet.content;
  if (fileName !== snippet.file_name || content !== snippet.content) {
    await commitFiles(repositoryPath(shards, snippet.repository_storage, snippet.disk_path), {
      branch: INITIAL_BRANCH, files: [{ path: fileName, content }], message: `Update ${fileName}`, author: commitAuthor(editor),
    });
  }
  return updateSnippetRow(db, snippet.id, {
    ...(change.title !== undefined ? { title: change.title } : {}),
    ...(change.description !== undefined ? { description: change.description } : {}),
    ...(change.fileName !== undefined ? { file_name: change.fileName } : {}),
    ...(change.content !== undefined ? { content: change.content } : {}),
    ...(change.visibilityLevel !== undefined ? { visibility_level: change.visibilityLevel } : {}),
  });
}

export async function deleteSnippet(db: Kysely<DB>, shards: StorageShard[], snippet: SnippetRow): Promise<void> {
  await deleteSnippetRow(db, snippet.id);
  await removeRepository(repositoryPath(shards, snippet.repository_storage, snippet.disk_path));
}
