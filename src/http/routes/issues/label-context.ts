/**
 * What the project and group label routes share: which labels a project or group sees (the
 * Service's LabelsFinder options), who may change a label (its owner's admin_label), and the
 * entity of each label for the viewer — subscription, project priority and, when asked
 * `with_counts`, issue counts over the label owner's projects as the viewer may see them.
 */
import type { FastifyRequest } from 'fastify';
import type { LabelRow } from '../../../db/tables/labels.ts';
import type { UserRow } from '../../../db/types.ts';
import {
  labelIssueCounts, labelMergeRequestCounts, labelPriorities, subscribedLabelIds, type LabelScope,
} from '../../../domain/labels/labels.queries.ts';
import { descendantGroupIds, namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { groupActor, projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import {
  presentGroupLabel, presentProjectLabel, type GroupLabel, type LabelCounts, type ProjectLabel,
} from '../../entities/label.ts';
import { forbidden } from '../../errors.ts';
import type { GroupContext, ProjectContext } from '../../loaders/containers.ts';

/** The group a project sits in directly, when its namespace is a group. */
export function projectGroupId(ctx: ProjectContext): number | null {
  return ctx.namespace.namespace.kind === 'group' ? ctx.namespace.namespace.id : null;
}

/** A project's labels and its group's (all ancestor groups' with `includeAncestors`). */
export function projectLabelScope(ctx: ProjectContext, includeAncestors: boolean): LabelScope {
  const groupId = projectGroupId(ctx);
  return { projectIds: [ctx.project.id], groupIds: groupId === null ? [] : includeAncestors ? ctx.lineage : [groupId] };
}

export interface GroupScopeOptions {
  includeAncestors: boolean;
  includeDescendants: boolean;
  /** false: the labels of the group's projects too (those the viewer may read). */
  onlyGroupLabels: boolean;
}

/** A group's labels with the ancestor and descendant groups' and projects' the options ask for. */
export async function groupLabelScope(request: FastifyRequest, ctx: GroupContext, o: GroupScopeOptions): Promise<LabelScope> {
  const db = request.server.kiln.db;
  const user = request.caller?.user ?? null;
  const groupIds = o.includeAncestors ? [...ctx.lineage] : [ctx.group.id];
  const projectNamespaces = [ctx.group.id];
  if (o.includeDescendants) {
    const below = [...(await descendantGroupIds(db, [ctx.group.id])).keys()];
    const paths = await namespacePathsById(db, below);
    for (const id of below) {
      const p = paths.get(id);
      if (!p) continue;
      // Descendants the viewer may read: inherited membership opens them all, else their own visibility or membership.
      const actor = await groupActor(db, user, p.lineage);
      if (canOnGroup(actor, 'read_group', p.namespace)) {
        groupIds.push(id);
        projectNamespaces.push(id);
      }
    }
  }
  let projectIds: number[] = [];
  if (!o.onlyGroupLabels) {
    const rows = await (await findProjects(db, user, { namespaceIds: projectNamespaces })).clearSelect().select('projects.id').execute();
    projectIds = rows.map((r) => r.id);
  }
  return { projectIds, groupIds };
}

/** Whether the viewer may change a label: admin_label on the project or group that owns it. */
export async function authorizeLabelAdmin(request: FastifyRequest, label: LabelRow, projectCtx?: ProjectContext): Promise<void> {
  const db = request.server.kiln.db;
  const user = request.caller?.user ?? null;
  if (label.project_id !== null) {
    if (projectCtx && projectCtx.project.id === label.project_id) {
      if (!canOnProject(projectCtx.actor, 'admin_label', projectCtx.project)) throw forbidden();
      return;
    }
    const project = await findProjectById(db, label.project_id);
    const paths = project && (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
    if (!project || !paths) throw forbidden();
    if (!canOnProject(await projectActor(db, user, project.id, paths.lineage), 'admin_label', project)) throw forbidden();
    return;
  }
  const paths = (await namespacePathsById(db, [label.group_id!])).get(label.group_id!);
  if (!paths) throw forbidden();
  if (!canOnGroup(await groupActor(db, user, paths.lineage), 'admin_label', paths.namespace)) throw forbidden();
}

/**
 * Issue counts of labels by their owner (the Service's Label#issues_count: a project label over
 * its project, a group label over the group's projects), as the viewer may see the issues.
 */
async function countsOf(request: FastifyRequest, rows: LabelRow[]): Promise<Map<number, LabelCounts>> {
  const db = request.server.kiln.db;
  const user: UserRow | null = request.caller?.user ?? null;
  const byOwner = new Map<string, LabelRow[]>();
  for (const r of rows) {
    const key = r.project_id !== null ? `p${r.project_id}` : `g${r.group_id}`;
    byOwner.set(key, [...(byOwner.get(key) ?? []), r]);
  }
  const out = new Map<number, LabelCounts>();
  const mergeRequests = await labelMergeRequestCounts(db, rows.map((r) => r.id));
  for (const labels of byOwner.values()) {
    const first = labels[0];
    let projectIds: number[] = [];
    let allConfidential = false;
    if (first.project_id !== null) {
      const project = await findProjectById(db, first.project_id);
      const paths = project && (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
      if (project && paths) {
        const actor = await projectActor(db, user, project.id, paths.lineage);
        if (canOnProject(actor, 'read_issue', project)) projectIds = [project.id];
        allConfidential = canOnProject(actor, 'read_confidential_issues', project);
      }
    } else {
      const paths = (await namespacePathsById(db, [first.group_id!])).get(first.group_id!);
      if (paths) {
        const actor = await groupActor(db, user, paths.lineage);
        const projects = await (await findProjects(db, user, { namespaceIds: [first.group_id!] })).execute();
        projectIds = projects.filter((p) => canOnProject(actor, 'read_issue', p)).map((p) => p.id);
        allConfidential = Boolean(user?.admin) || actor.accessLevel >= ACCESS_LEVELS.reporter;
      }
    }
    const counts = await labelIssueCounts(db, { labelIds: labels.map((l) => l.id), projectIds, allConfidential, userId: user?.id ?? null });
    for (const l of labels) {
      const c = counts.get(l.id)!;
      out.set(l.id, {
        open_issues_count: c.opened, closed_issues_count: c.closed, open_merge_requests_count: mergeRequests.get(l.id) ?? 0,
      });
    }
  }
  return out;
}

export async function presentProjectLabels(
  request: FastifyRequest, ctx: ProjectContext, rows: LabelRow[], withCounts: boolean,
): Promise<ProjectLabel[]> {
  const db = request.server.kiln.db;
  const ids = rows.map((r) => r.id);
  const [priorities, subscribed, counts] = await Promise.all([
    labelPriorities(db, ctx.project.id, ids),
    subscribedLabelIds(db, request.caller?.user.id ?? null, ids),
    withCounts ? countsOf(request, rows) : Promise.resolve(null),
  ]);
  return rows.map((r) => presentProjectLabel(r, {
    subscribed: subscribed.has(r.id), priority: priorities.get(r.id) ?? null, counts: counts?.get(r.id),
  }));
}

export async function presentGroupLabels(request: FastifyRequest, rows: LabelRow[], withCounts: boolean): Promise<GroupLabel[]> {
  const db = request.server.kiln.db;
  const ids = rows.map((r) => r.id);
  const [subscribed, counts] = await Promise.all([
    subscribedLabelIds(db, request.caller?.user.id ?? null, ids),
    withCounts ? countsOf(request, rows) : Promise.resolve(null),
  ]);
  return rows.map((r) => presentGroupLabel(r, { subscribed: subscribed.has(r.id), counts: counts?.get(r.id) }));
}
