/**
 * Personal snippets (app/policies/personal_snippet_policy.rb, reduced): the author and
 * administrators read and change them; others read them by visibility (public to everyone,
 * internal to signed-in users who are not external).
 */
import type { UserRow } from '../../db/types.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import { visibleWithoutMembership } from '../permissions/access.ts';

export type SnippetAction = 'read_snippet' | 'admin_snippet';

export function canOnSnippet(user: UserRow | null, action: SnippetAction, snippet: SnippetRow): boolean {
  if (user && (user.admin === 1 || user.id === snippet.author_id)) return true;
  return action === 'read_snippet' && visibleWithoutMembership({ user, accessLevel: 0 }, snippet.visibility_level);
}
