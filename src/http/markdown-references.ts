/**
 * The ReferenceResolver (domain/markdown/references.ts) for one viewer and an optional context
 * project: which of the references a text makes the viewer may see, with their URLs.
 *
 * - `@username`: any active user (the Service links every user it finds).
 * - `@all`: only with a context project, linking to it.
 * - `#iid`: the context project's issues, if the viewer may read issues there; a confidential
 *   one only for those canReadIssue lets see it (domain/issues/issue.policy.ts).
 * - `!iid`: the context project's merge requests, if the viewer may read them there.
 * - `~label`, `%milestone`: the context project's and its ancestor groups', if the viewer may read
 *   labels (milestones) of the project; the project's own win over a group's of the same name.
 * Without a context project only users resolve (the Service renders with `skip_project_check`).
 *
 * Descriptions and notes that expose `description_html` / `body_html` can reuse this with the
 * project they belong to.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import { canReadIssue } from '../domain/issues/issue.policy.ts';
import type {
  IssueReference, LabelReference, MergeRequestReference, MilestoneReference, ReferenceResolver, UserReference,
} from '../domain/markdown/render.ts';
import {
  activeUsersByUsernames, labelsByIdsOrTitles, milestonesByIidsOrTitles, projectIssuesByIids, projectMergeRequestsByIids,
} from '../domain/markdown/references.queries.ts';
import { namespacePathsById } from '../domain/namespaces/namespaces.queries.ts';
import type { Actor } from '../domain/permissions/access.ts';
import { canOnProject } from '../domain/permissions/project.policy.ts';
import type { ProjectContext } from './loaders/containers.ts';

export interface ReferenceContext {
  /** The instance's external URL (links are absolute, as the API renders with `only_path: false`). */
  externalUrl: string;
  /** The viewer, when there is no context project. */
  viewer: Actor['user'];
  /** The context project as loadProject found it for the viewer (its actor is the viewer's). */
  project?: ProjectContext;
}

function orderBy<T>(rows: T[], rank: (row: T) => number): T[] {
  return [...rows].sort((a, b) => rank(a) - rank(b));
}

export function referenceResolverFor(db: Kysely<DB>, context: ReferenceContext): ReferenceResolver {
  const base = context.externalUrl.replace(/\/+$/, '');
  const ctx = context.project;
  const projectPath = ctx ? `${ctx.namespace.fullPath}/${ctx.project.path}` : '';
  const projectUrl = `${base}/${projectPath}`;
  // The project's namespace and its ancestors, nearest first: whose labels and milestones apply.
  const groupIds = ctx && ctx.namespace.namespace.kind === 'group' ? ctx.lineage : [];
  const may = (action: 'read_issue' | 'read_label' | 'read_milestone' | 'read_merge_request') =>
    ctx !== undefined && canOnProject(ctx.actor, action, ctx.project);

  return {
    async users(usernames: string[]): Promise<UserReference[]> {
      const rows = await activeUsersByUsernames(db, usernames.map((u) => u.toLowerCase()));
      return rows.map((u) => ({ id: u.id, username: u.username, name: u.name, url: `${base}/${u.username}` }));
    },

    async issues(iids: number[]): Promise<IssueReference[]> {
      if (!ctx || !may('read_issue')) return [];
      const rows = await projectIssuesByIids(db, ctx.project.id, iids);
      return rows.filter((i) => canReadIssue(ctx.actor, ctx.project, i)).map((i) => ({
        id: i.id, iid: i.iid, title: i.title, url: `${projectUrl}/-/issues/${i.iid}`,
        projectId: ctx.project.id, projectPath, issueType: i.issue_type,
      }));
    },

    async mergeRequests(iids: number[]): Promise<MergeRequestReference[]> {
      if (!ctx || !may('read_merge_request')) return [];
      const rows = await projectMergeRequestsByIids(db, ctx.project.id, iids);
      return rows.map((m) => ({
        id: m.id, iid: m.iid, title: m.title, url: `${projectUrl}/-/merge_requests/${m.iid}`, projectId: ctx.project.id, projectPath,
      }));
    },

    async labels({ ids, titles }): Promise<LabelReference[]> {
      if (!ctx || !may('read_label')) return [];
      const rows = await labelsByIdsOrTitles(db, ctx.project.id, groupIds, ids, titles);
      const rank = (l: { project_id: number | null; group_id: number | null }) =>
        (l.project_id !== null ? -1 : groupIds.indexOf(l.group_id ?? -1));
      return orderBy(rows, rank).map((l) => ({
        id: l.id, title: l.title, color: l.color, description: l.description,
        url: `${projectUrl}/-/issues?label_name=${encodeURIComponent(l.title)}`, projectId: l.project_id,
      }));
    },

    async milestones({ iids, titles }): Promise<MilestoneReference[]> {
      if (!ctx || !may('read_milestone')) return [];
      const rows = await milestonesByIidsOrTitles(db, ctx.project.id, groupIds, iids, titles);
      const milestoneGroups = [...new Set(rows.flatMap((m) => (m.group_id === null ? [] : [m.group_id])))];
      const groupPaths = milestoneGroups.length > 0 ? await namespacePathsById(db, milestoneGroups) : new Map();
      const rank = (m: { project_id: number | null; group_id: number | null }) =>
        (m.project_id !== null ? -1 : groupIds.indexOf(m.group_id ?? -1));
      return orderBy(rows, rank).flatMap((m) => {
        const reference = { id: m.id, iid: m.iid, title: m.title, projectId: m.project_id };
        if (m.project_id !== null) return [{ ...reference, url: `${projectUrl}/-/milestones/${m.iid}` }];
        const group = groupPaths.get(m.group_id ?? -1);
        return group ? [{ ...reference, url: `${base}/groups/${group.fullPath}/-/milestones/${m.iid}` }] : [];
      });
    },

    async allMembers() {
      if (!ctx) return null;
      return { url: projectUrl, projectId: ctx.project.id, authorId: ctx.actor.user?.id ?? context.viewer?.id ?? null };
    },
  };
}
