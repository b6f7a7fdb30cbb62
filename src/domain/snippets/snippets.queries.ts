/** Every Kysely call about snippets: personal ones (no project) and a project's. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SnippetRow, SnippetsTable } from '../../db/tables/snippets.ts';
import { nowIso } from '../clock.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findSnippetById(db: Db, id: number): Promise<SnippetRow | undefined> {
  return db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every snippet the user wrote, personal and in projects. */
export function snippetsByAuthor(db: Db, authorId: number) {
  return db.selectFrom('snippets').selectAll().where('author_id', '=', authorId);
}

/** Which projects' snippets a viewer reaches: everything but a disabled feature (administrators), or by visibility and membership. */
export type SnippetProjectsReach = 'admin' | { minVisible: number; projectIds: number[]; groupIds: number[] };

/**
 * The user's snippets as `GET /snippets` lists them (SnippetsFinder with `author`): their personal
 * ones, and those they wrote in projects whose snippets the viewer may read — the snippets feature
 * on and the project public or internal to them, or the feature on or private and the viewer a
 * member (direct, or through a group). One EXISTS per row keeps it on snippets_author and the
 * projects' primary key.
 */
export function authorSnippetsQuery(db: Db, authorId: number, reach: SnippetProjectsReach) {
  return snippetsByAuthor(db, authorId).where((eb) => eb.or([
    eb('snippets.project_id', 'is', null),
    eb.exists(eb.selectFrom('projects').select(sql.lit(1).as('one'))
      .whereRef('projects.id', '=', 'snippets.project_id')
      .where('projects.snippets_access_level', '>', 0)
      .where((p) => (reach === 'admin' ? p.lit(true) : p.or([
        p.and([p('projects.snippets_access_level', '>=', 20), p('projects.visibility_level', '>=', reach.minVisible)]),
        ...(reach.projectIds.length ? [p('projects.id', 'in', reach.projectIds)] : []),
        ...(reach.groupIds.length ? [p('projects.namespace_id', 'in', reach.groupIds)] : []),
      ])))),
  ]));
}

/** Public personal snippets (the Service's `only_personal_snippets.are_public`), served by snippets_visibility. */
export function publicSnippets(db: Db) {
  return db.selectFrom('snippets').selectAll().where('visibility_level', '=', VISIBILITY_LEVELS.public).where('project_id', 'is', null);
}

/**
 * A project's snippets, served by snippets_project: all of them (`'all'`, for members and
 * administrators), or those of the visibility levels given and the viewer's own.
 */
export function projectSnippetsQuery(db: Db, projectId: number, visible: 'all' | { levels: readonly number[]; authorId: number | null }) {
  const qb = db.selectFrom('snippets').selectAll().where('project_id', '=', projectId);
  if (visible === 'all') return qb;
  const { levels, authorId } = visible;
  return qb.where((eb) => eb.or([
    eb('visibility_level', 'in', [...levels]),
    ...(authorId !== null ? [eb('author_id', '=', authorId)] : []),
  ]));
}

export function findProjectSnippet(db: Db, projectId: number, id: number): Promise<SnippetRow | undefined> {
  return db.selectFrom('snippets').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/**
 * A deleted user's project snippets stay with their projects, written by the ghost user
 * (Users::MigrateToGhostUserService#migrate_snippets); personal ones go with the account.
 */
export async function moveProjectSnippets(db: Db, fromId: number, toId: number): Promise<void> {
  await db.updateTable('snippets').set({ author_id: toId }).where('author_id', '=', fromId).where('project_id', 'is not', null).execute();
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
    & { visibility_level: number; project_id: number | null },
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
