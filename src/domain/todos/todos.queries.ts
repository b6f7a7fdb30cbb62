/**
 * Todos (the Service's Todo): a user's pending work item, created when someone assigns them,
 * mentions them, or they add one themselves. Created by the operation that causes it, inside its
 * transaction.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

/** The Service's Todo actions (Todo::ASSIGNED …). */
export const TODO_ACTIONS = {
  assigned: 1, mentioned: 2, build_failed: 3, marked: 4, approval_required: 5, unmergeable: 6, directly_addressed: 7,
  merge_train_removed: 8, review_requested: 9, member_access_requested: 10, review_submitted: 11,
} as const;
export type TodoActionName = keyof typeof TODO_ACTIONS;

export interface NewTodo {
  user_id: number;
  author_id: number;
  project_id: number | null;
  group_id?: number | null;
  target_type: string;
  target_id: number | null;
  commit_id?: string | null;
  note_id?: number | null;
  action: TodoActionName;
}

export async function createTodos(db: Kysely<DB> | Transaction<DB>, todos: readonly NewTodo[], now = nowIso()): Promise<void> {
  if (todos.length === 0) return;
  await db.insertInto('todos').values(todos.map((t) => ({
    user_id: t.user_id, author_id: t.author_id, project_id: t.project_id, group_id: t.group_id ?? null,
    target_type: t.target_type, target_id: t.target_id, commit_id: t.commit_id ?? null, note_id: t.note_id ?? null,
    action: TODO_ACTIONS[t.action], state: 'pending', created_at: now, updated_at: now,
  }))).execute();
}

/** Usernames a text mentions (`@name`), lower-cased and once each; `@all` and code spans are the caller's concern. */
export function mentionedUsernames(text: string, limit = 100): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/(?:^|[^\w@/.])@([a-zA-Z0-9_][a-zA-Z0-9_.-]{0,254})/g)) {
    names.add(m[1].replace(/[.-]+$/, '').toLowerCase());
    if (names.size >= limit) break;
  }
  return [...names];
}
