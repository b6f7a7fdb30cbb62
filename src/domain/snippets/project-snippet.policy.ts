/**
 * What a viewer may do with one project snippet (ProjectSnippetPolicy of the Service 15.2): the
 * project's snippet abilities (project.policy.ts, which enforces snippets_access_level) and the
 * snippet's own visibility, the stricter of the two. A public snippet is read by every reader of
 * the project's snippets; an internal one by signed-in users who are not external, members and
 * its author; a private one by members (Guest and up) and its author. Its author changes it while
 * they may read it; Maintainers change anyone's; administrators everything.
 */
import type { Actor } from '../permissions/access.ts';
import { ACCESS_LEVELS, VISIBILITY_LEVELS } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';

export interface ProjectSnippetSubject {
  author_id: number;
  visibility_level: number;
}

export type ProjectSnippetAction = 'read_snippet' | 'update_snippet' | 'admin_snippet';

function readable(actor: Actor, project: ProjectSubject, snippet: ProjectSnippetSubject): boolean {
  if (!canOnProject(actor, 'read_snippet', project)) return false;
  if (actor.user?.admin) return true;
  const member = actor.accessLevel >= ACCESS_LEVELS.guest;
  const author = actor.user !== null && actor.user.id === snippet.author_id;
  if (snippet.visibility_level >= VISIBILITY_LEVELS.public) return true;
  if (snippet.visibility_level >= VISIBILITY_LEVELS.internal) return member || author || (actor.user !== null && !actor.user.external);
  return member || author;
}

export function canOnProjectSnippet(
  actor: Actor, action: ProjectSnippetAction, project: ProjectSubject, snippet: ProjectSnippetSubject,
): boolean {
  if (!readable(actor, project, snippet)) return false;
  if (action === 'read_snippet') return true;
  if (canOnProject(actor, 'admin_snippet', project)) return true;
  return actor.user !== null && actor.user.id === snippet.author_id && !project.archived;
}
