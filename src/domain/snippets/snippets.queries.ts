/** Every Kysely call about personal snippets. */
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SnippetRow, SnippetsTable } from '../../db/tables/snippets.ts';
import { nowIso } from '../clock.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findSnippetById(db: Db, id: number): Promise<SnippetRow | undefined> {
  return db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst();
}

export function snippetsByAuthor(db: Db, authorId: number) {
  return db.selectFrom('snippets').selectAll().where('author_id', '=', authorId);
}

/** Public personal snippets (the Service's `only_personal_snippets.are_public`), served by snippets_visibility. */
export function publicSnippets(db: Db) {
  return db.selectFrom('snippets').selectAll().where('visibility_level', '=', VISIBILITY_LEVELS.public);
}

/** The authors of a page of snippets, in one query. */
export async function snippetAuthors(db: Db, snippets: Pick<SnippetRow, 'author_id'>[]): Promise<Map<number, UserRow>> {
  const ids = [...new Set(snippets.map((s) => s.author_id))];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((u) => [u.id, u]));
}

export async function insertSnippet(
  db: Db,
  s: Pick<SnippetsTable, 'title' | 'description' | 'file_name' | 'content' | 'author_id' | 'repository_storage'>
    & { visibility_level: number },
): Promise<SnippetRow> {
  const now = nowIso();
  const row = await db.insertInto('snippets').values({
    ...s, disk_path: '', created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  // The repository is named by the id, known only now (same transaction as the insert).
  return db.updateTable('snippets').set({ disk_path: `@snippets/${row.id}.git` }).where(
    'id', '=', row.id,
  ).returningAll().executeTakeFirstOrThrow();
}

export async function updateSnippetRow(
  db: Db, id: number,
  set: Partial<Pick<SnippetsTable, 'title' | 'description' | 'file_name' | 'content' | 'file_paths'>> & { visibility_level?: number },
): Promise<SnippetRow> {
  return db.updateTable('snippets').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteSnippetRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('snippets').where('id', '=', id).execute();
}
