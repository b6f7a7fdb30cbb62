/**
 * Whom a new note gives a todo (TodoService#new_note of the Service 15.2): every user it mentions
 * who may read the noteable, except its author; users named at the very start of the note are
 * "directly addressed", the others "mentioned". System notes and notes on snippets raise none
 * (Note#can_create_todo?).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { findUsersByUsernames } from '../users/users-batch.queries.ts';
import { mentionedUsernames } from '../todos/todos.queries.ts';

export interface MentionTodo {
  userId: number;
  action: 'mentioned' | 'directly_addressed';
}

/** The usernames a note opens with (`@alice @bob, please look`), lower-cased. */
export function directlyAddressedUsernames(text: string): Set<string> {
  const lead = /^(?:\s*@[a-zA-Z0-9_][a-zA-Z0-9_.-]*[\s,]*)+/.exec(text);
  return new Set(lead ? mentionedUsernames(lead[0]) : []);
}

export async function mentionTodos(
  db: Kysely<DB>, text: string, authorId: number, canRead: (user: UserRow) => Promise<boolean>,
): Promise<MentionTodo[]> {
  const names = mentionedUsernames(text);
  if (names.length === 0) return [];
  const direct = directlyAddressedUsernames(text);
  const out: MentionTodo[] = [];
  for (const user of await findUsersByUsernames(db, names)) {
    if (user.id === authorId || user.state !== 'active' || !(await canRead(user))) continue;
    out.push({ userId: user.id, action: direct.has(user.username.toLowerCase()) ? 'directly_addressed' : 'mentioned' });
  }
  return out;
}
