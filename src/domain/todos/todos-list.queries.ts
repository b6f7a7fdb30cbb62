/**
 * A user's todos (TodosFinder and TodoService of the Service 15.2): listing them newest first
 * with the API's filters, marking one for oneself ("Add a to-do item": none when a pending todo
 * on the same target exists), and marking them done.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { TodosTable } from '../../db/tables/notes.ts';
import { nowIso } from '../clock.ts';
import { descendantGroupIds } from '../namespaces/namespaces.queries.ts';
import { TODO_ACTIONS, type TodoActionName } from './todos.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type TodoRow = Selectable<TodosTable>;

/** The action name of a stored action number (Todo#action_name). */
export function todoActionName(action: number): TodoActionName | null {
  for (const [name, n] of Object.entries(TODO_ACTIONS)) if (n === action) return name as TodoActionName;
  return null;
}

export interface TodoFilters {
  action?: TodoActionName;
  author_id?: number;
  project_id?: number;
  /** A group: its todos and those of every project below it (TodosFinder#by_group). */
  group_id?: number;
  /** Default pending. */
  state?: 'pending' | 'done';
  type?: string;
}

/** The user's todos matching `f`, newest first (TodosFinder's default `id_desc`). */
export async function todosOfUser(db: Db, userId: number, f: TodoFilters) {
  let qb = db.selectFrom('todos').selectAll().where('user_id', '=', userId).where('state', '=', f.state ?? 'pending');
  if (f.action !== undefined) qb = qb.where('action', '=', TODO_ACTIONS[f.action]);
  if (f.author_id !== undefined) qb = qb.where('author_id', '=', f.author_id);
  if (f.project_id !== undefined) qb = qb.where('project_id', '=', f.project_id);
  if (f.type !== undefined) qb = qb.where('target_type', '=', f.type);
  if (f.group_id !== undefined) {
    const groups = [f.group_id, ...(await descendantGroupIds(db, [f.group_id])).keys()];
    qb = qb.where((eb) => eb.or([
      eb('group_id', 'in', groups),
      eb('project_id', 'in', eb.selectFrom('projects').select('projects.id').where('projects.namespace_id', 'in', groups)),
    ]));
  }
  return qb.orderBy('id', 'desc');
}

export function findTodoOfUser(db: Db, userId: number, id: number): Promise<TodoRow | undefined> {
  return db.selectFrom('todos').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export interface MarkedTarget {
  project_id: number | null;
  group_id: number | null;
  target_type: string;
  target_id: number;
}

/**
 * A `marked` todo of the user on the target, or null when they already have a pending todo on it
 * (TodoService#mark_todo skips users with one, whatever its action).
 */
export async function markTodo(db: Kysely<DB>, userId: number, target: MarkedTarget): Promise<TodoRow | null> {
  return db.transaction().execute(async (trx) => {
    const pending = await trx.selectFrom('todos').select('id').where('user_id', '=', userId).where('state', '=', 'pending')
      .where('target_type', '=', target.target_type).where('target_id', '=', target.target_id).executeTakeFirst();
    if (pending) return null;
    const now = nowIso();
    return trx.insertInto('todos').values({
      user_id: userId, author_id: userId, project_id: target.project_id, group_id: target.group_id, target_type: target.target_type,
      target_id: target.target_id, commit_id: null, note_id: null, action: TODO_ACTIONS.marked, state: 'pending',
      created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

export async function markTodoDone(db: Db, todo: TodoRow): Promise<TodoRow> {
  if (todo.state === 'done') return todo;
  const now = nowIso();
  await db.updateTable('todos').set({ state: 'done', updated_at: now }).where('id', '=', todo.id).execute();
  return { ...todo, state: 'done', updated_at: now };
}

/** Every pending todo of the user done (TodoService#resolve_todos over the finder's default set). */
export async function markAllTodosDone(db: Db, userId: number): Promise<void> {
  await db.updateTable('todos').set({ state: 'done', updated_at: nowIso() })
    .where('user_id', '=', userId).where('state', '=', 'pending').execute();
}

export async function noteTextsByIds(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('notes').select(['id', 'note']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.note]));
}
