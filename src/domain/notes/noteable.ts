/**
 * What a note is attached to (the Service's Noteable): an issue, a project snippet or a commit of
 * the project's repository, named by class name and row id (a commit by its sha), and who may read
 * and write its notes. The notes, discussions and award emoji of every noteable share this one model.
 */
import { ACCESS_LEVELS, type Actor, visibleWithoutMembership } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';

export type NoteableType = 'Issue' | 'MergeRequest' | 'Snippet' | 'Commit';

export interface NoteableRef {
  type: NoteableType;
  /** The row's id; null for a commit. */
  id: number | null;
  /** A commit's sha; null for the others. */
  commitId: string | null;
  projectId: number;
  /** An issue's or merge request's iid (noteable_iid of the Note entity); null for the others. */
  iid: number | null;
}

// ProjectFeature levels (domain/projects/project-attributes.ts).
const FEATURE_DISABLED = 0;
const FEATURE_PRIVATE = 10;

export interface ProjectSnippetSubject {
  author_id: number;
  visibility_level: number;
}

/**
 * ProjectSnippetPolicy (app/policies/project_snippet_policy.rb, 15.2): the snippets feature off
 * hides every snippet, at "members only" from non-members; then a public snippet is read by
 * whoever reads the project, an internal one by signed-in users who are not external, a private
 * one by the project's members and its author. Administrators read them all.
 */
export function canReadProjectSnippet(
  actor: Actor, project: ProjectSubject & { snippets_access_level: number }, snippet: ProjectSnippetSubject,
): boolean {
  if (actor.user?.admin) return true;
  if (!canOnProject(actor, 'read_project', project)) return false;
  const feature = project.snippets_access_level;
  const member = actor.accessLevel >= ACCESS_LEVELS.guest;
  if (feature <= FEATURE_DISABLED) return false;
  if (feature <= FEATURE_PRIVATE && !member) return false;
  if (member || (actor.user !== null && actor.user.id === snippet.author_id)) return true;
  return visibleWithoutMembership(actor, snippet.visibility_level);
}
