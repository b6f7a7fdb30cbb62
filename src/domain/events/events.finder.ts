/**
 * The read side of the activity feeds (the Service's EventsFinder, 15.2): the events of a source
 * (a user's own, a user's contributions, a project's, or with `scope=all` those of every project
 * the caller is a member of), restricted to projects the viewer may see
 * (`Project.public_or_visible_to_user`, which drops events without a project), then filtered by
 * action, target type and day, ordered by id.
 *
 * Like the Service, the per-event check (Event#visible_to_user?: pushes need download_code, issue
 * events and comments on issues read_issue on that issue, …) runs on the page once it is read
 * (`visibleEvents`), so a page may hold fewer events than asked for while the total counts them all.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { EventRow } from '../../db/tables/notes.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { VISIBILITY_LEVELS, type Actor } from '../permissions/access.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { canReadIssue } from '../issues/issue.policy.ts';
import { reachOf, type Reach } from '../projects/project.finder.ts';
import { canOnProjectSnippet } from '../snippets/project-snippet.policy.ts';
import { EVENT_ACTIONS, type EventAction, eventTargetsOf, type EventTargets } from './events.queries.ts';

/** Event::TARGET_TYPES of the Service 15.2: the `target_type` filter's names and the class each stands for. */
export const EVENT_TARGET_TYPES = {
  issue: 'Issue', milestone: 'Milestone', merge_request: 'MergeRequest', note: 'Note', project: 'Project',
  snippet: 'Snippet', user: 'User', wiki: 'WikiPage::Meta', design: 'DesignManagement::Design',
} as const;
export type EventTargetTypeName = keyof typeof EVENT_TARGET_TYPES;
export { EVENT_ACTIONS };

export type EventSource =
  | { kind: 'author'; userId: number }
  | { kind: 'project'; projectId: number }
  /** `scope=all`: every project the viewer is a member of (User#authorized_projects). */
  | { kind: 'authorized' }
  /** Nothing (EventsFinder's Event.none, for a private profile the viewer may not read). */
  | { kind: 'none' };

export interface EventFilters {
  action?: EventAction;
  targetType?: EventTargetTypeName;
  /** YYYY-MM-DD: events before that day began. */
  before?: string;
  /** YYYY-MM-DD: events after that day ended. */
  after?: string;
  sort: 'asc' | 'desc';
}

export type EventsQuery = SelectQueryBuilder<DB, 'events' | 'projects', EventRow>;

/** The day after a YYYY-MM-DD day (UTC), as the same form. */
function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

const levelIn = (reach: Reach | null, p: Pick<ProjectRow, 'id' | 'namespace_id'>) => (
  reach ? Math.max(reach.projects.get(p.id) ?? 0, reach.groups.get(p.namespace_id) ?? 0) : 0
);

export interface EventsFinder {
  query: EventsQuery;
  /** What the viewer reaches by membership (null: anonymous); `visibleEvents` reuses it. */
  reach: Reach | null;
}

export async function findEvents(db: Kysely<DB>, viewer: UserRow | null, source: EventSource, f: EventFilters): Promise<EventsFinder> {
  const reach = viewer ? await reachOf(db, viewer) : null;
  let qb: EventsQuery = db.selectFrom('events').innerJoin('projects', 'projects.id', 'events.project_id').selectAll('events');
  if (source.kind === 'author') qb = qb.where('events.author_id', '=', source.userId);
  else if (source.kind === 'project') qb = qb.where('events.project_id', '=', source.projectId);
  else if (source.kind === 'none') qb = qb.where(sql<boolean>`1 = 0`);
  else {
    const projectIds = reach ? [...reach.projects.keys()] : [];
    const groupIds = reach ? [...reach.groups.keys()] : [];
    const inGroups = groupIds.length
      ? (await db.selectFrom('projects').select('id').where('namespace_id', 'in', groupIds).execute()).map((p) => p.id) : [];
    const ids = [...new Set([...projectIds, ...inGroups])];
    qb = ids.length ? qb.where('events.project_id', 'in', ids) : qb.where(sql<boolean>`1 = 0`);
  }
  if (!viewer?.admin) {
    const minVisible = viewer && !viewer.external ? VISIBILITY_LEVELS.internal : VISIBILITY_LEVELS.public;
    const projectIds = reach ? [...reach.projects.keys()] : [];
    const groupIds = reach ? [...reach.groups.keys()] : [];
    qb = qb.where((eb) => eb.or([
      eb('projects.visibility_level', '>=', minVisible),
      ...(projectIds.length ? [eb('projects.id', 'in', projectIds)] : []),
      ...(groupIds.length ? [eb('projects.namespace_id', 'in', groupIds)] : []),
    ]));
  }
  if (f.action) qb = qb.where('events.action', '=', f.action);
  if (f.targetType) qb = qb.where('events.target_type', '=', EVENT_TARGET_TYPES[f.targetType]);
  // EventsFinder: before the day begins, after the day ends (both exclusive). Times are ISO text, so a day compares as a prefix.
  if (f.before) qb = qb.where('events.created_at', '<', f.before);
  if (f.after) qb = qb.where('events.created_at', '>=', nextDay(f.after));
  return { query: qb.orderBy('events.id', f.sort), reach };
}

function actorFor(viewer: UserRow | null, reach: Reach | null, project: ProjectRow): Actor {
  return { user: viewer, accessLevel: levelIn(reach, project) };
}

/**
 * Event#visible_to_user? for a page of events: each event's capability (download_code for pushes
 * and comments on commits; read_project for membership changes and project creation; read_issue
 * on the issue for issue events and comments on issues; read_merge_request; read_snippet for
 * comments on snippets; read_milestone; read_note for other comments) asked of its project or
 * target; an event with none of them is left out. `targets` holds the page's targets, read in bulk.
 */
export function visibleEvents(
  viewer: UserRow | null, reach: Reach | null, events: EventRow[], projects: Map<number, ProjectRow>, targets: EventTargets,
): EventRow[] {
  return events.filter((e) => {
    const project = e.project_id === null ? undefined : projects.get(e.project_id);
    if (!project) return false;
    const actor = actorFor(viewer, reach, project);
    const issueReadable = (issueId: number | null) => {
      const issue = issueId === null ? undefined : targets.issues.get(issueId);
      return issue !== undefined && canReadIssue(actor, project, issue);
    };
    if (e.action === 'pushed') return canOnProject(actor, 'download_code', project);
    if (['joined', 'left', 'expired'].includes(e.action)) return canOnProject(actor, 'read_project', project);
    if (e.action === 'created' && e.target_type === null) return canOnProject(actor, 'read_project', project);
    switch (e.target_type) {
      case 'Issue': return issueReadable(e.target_id);
      case 'MergeRequest': return canOnProject(actor, 'read_merge_request', project);
      case 'Milestone': return canOnProject(actor, 'read_milestone', project);
      case 'WikiPage::Meta': return canOnProject(actor, 'read_wiki', project);
      case 'Note': {
        const note = e.target_id === null ? undefined : targets.notes.get(e.target_id);
        if (!note) return canOnProject(actor, 'read_note', project);
        if (note.noteable_type === 'Commit') return canOnProject(actor, 'download_code', project);
        if (note.noteable_type === 'Issue') return issueReadable(note.noteable_id);
        if (note.noteable_type === 'Snippet') {
          const snippet = note.noteable_id === null ? undefined : targets.snippets.get(note.noteable_id);
          return snippet !== undefined && canOnProjectSnippet(actor, 'read_snippet', project, snippet);
        }
        return canOnProject(actor, 'read_note', project);
      }
      default: return false;
    }
  });
}

export { eventTargetsOf };
