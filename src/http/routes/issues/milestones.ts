/**
 * Milestones of projects and groups (lib/api/milestones.rb, group_milestones.rb and
 * milestone_responses.rb, 15.2). Reading takes read_milestone on the project (anonymous callers
 * read public ones) or read_group; writing takes admin_milestone (Reporter). Lists filter by
 * state, iids, title, search and update time, newest first; `include_parent_milestones` adds the
 * ancestor groups' milestones. A milestone's issues are listed by the issues area
 * (…/milestones/:milestone_id/issues needs the issue entity).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { MilestoneRow } from '../../../db/tables/labels.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { findMilestoneInScope, milestonesQuery, type MilestoneScope } from '../../../domain/milestones/milestones.queries.ts';
import { createMilestone, deleteMilestone, updateMilestone } from '../../../domain/milestones/write-milestone.ts';
import { promoteMilestone } from '../../../domain/milestones/promote-milestone.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { projectsInNamespaces } from '../../../domain/projects/projects.queries.ts';
import { groupActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { MilestoneSchema, presentMilestone } from '../../entities/milestone.ts';
import { ApiError, forbidden, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import {
  authorizeGroup, authorizeProject, loadGroup, loadProject, type GroupContext, type ProjectContext,
} from '../../loaders/containers.ts';
import { MergeRequestBasicSchema } from '../../entities/merge-request.ts';
import { presentMergeRequestsFor } from '../../loaders/merge-request-presenting.ts';
import {
  orderMergeRequests, visibleMergeRequests, type MergeRequestContainer,
} from '../../../domain/merge-requests/merge-requests.finder.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import type { ReferenceContext } from '../../entities/issue.ts';
import { groupAndDescendants } from './issue-lists.ts';
import { route } from '../../route.ts';
import { projectGroupId } from './label-context.ts';

const projectId = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const groupId = { id: P.string({ description: 'ID or URL-encoded full path of the group' }) };
const milestoneId = { milestone_id: P.integer({ description: 'the milestone id (not its iid)' }) };
const listParams = {
  iids: P.optional(P.array(P.integer(), { description: 'only these iids' })),
  state: P.optional(P.oneOf(['active', 'closed', 'all'] as const)),
  title: P.optional(P.string({ maxLength: 1024 })),
  search: P.optional(P.string({ maxLength: 1024 })),
  include_parent_milestones: P.optional(P.boolean({ default: false })),
  updated_before: P.optional(P.dateTime()),
  updated_after: P.optional(P.dateTime()),
  ...paginationParams,
};
const writeFields = {
  description: P.optional(P.string()),
  due_date: P.optional(P.date()),
  start_date: P.optional(P.date()),
};
const updateFields = {
  title: P.optional(P.string()),
  ...writeFields,
  state_event: P.optional(P.oneOf(['close', 'activate'] as const)),
};
const updateRule = { atLeastOneOf: [['title', 'description', 'due_date', 'start_date', 'state_event']] };

const milestones: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const projectWebUrl = (ctx: ProjectContext) => `${config.externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`;

  /** Each milestone with its web_url: under its project, or under its group (paths looked up once). */
  async function present(rows: MilestoneRow[], ctx?: ProjectContext) {
    const groupIds = [...new Set(rows.flatMap((r) => (r.group_id === null ? [] : [r.group_id])))];
    const paths = await namespacePathsById(db, groupIds);
    return rows.map((r) => presentMilestone(r, r.group_id === null
      ? projectWebUrl(ctx!)
      : `${config.externalUrl}/groups/${paths.get(r.group_id)?.fullPath ?? ''}`));
  }

  function filters(input: {
    iids?: number[]; state?: 'active' | 'closed' | 'all'; title?: string; search?: string; include_parent_milestones: boolean;
    updated_before?: string; updated_after?: string;
  }) {
    return {
      // The Service ignores iids when parents' milestones are included (their iids are numbered apart).
      iids: input.include_parent_milestones ? undefined : input.iids,
      state: input.state === 'all' ? undefined : input.state,
      title: input.title, search: input.search, updatedBefore: input.updated_before, updatedAfter: input.updated_after,
    };
  }

  async function projectMilestone(ctx: ProjectContext, id: number): Promise<MilestoneRow> {
    const row = isStorableId(id) ? await findMilestoneInScope(db, { projectIds: [ctx.project.id], groupIds: [] }, id) : undefined;
    if (!row) throw notFound('Milestone');
    return row;
  }

  async function groupMilestone(ctx: GroupContext, id: number): Promise<MilestoneRow> {
    const row = isStorableId(id) ? await findMilestoneInScope(db, { projectIds: [], groupIds: [ctx.group.id] }, id) : undefined;
    if (!row) throw notFound('Milestone');
    return row;
  }

  /** A project milestone's title may not repeat its own project's or its group's. */
  function projectRelatives(ctx: ProjectContext): MilestoneScope {
    const g = projectGroupId(ctx);
    return { projectIds: [ctx.project.id], groupIds: g === null ? [] : [g] };
  }

  /** A group milestone's title may not repeat the group's or its projects'. */
  async function groupRelatives(ctx: GroupContext): Promise<MilestoneScope> {
    const projects = await projectsInNamespaces(db, [ctx.group.id]).clearSelect().select('projects.id').execute();
    return { projectIds: projects.map((p) => p.id), groupIds: [ctx.group.id] };
  }

  async function readableProject(request: FastifyRequest, id: string) {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'read_milestone');
    return ctx;
  }

  async function writableProject(request: FastifyRequest, id: string) {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'admin_milestone');
    return ctx;
  }

  async function writableGroup(request: FastifyRequest, id: string) {
    const ctx = await loadGroup(request, id);
    authorizeGroup(ctx, 'admin_milestone');
    return ctx;
  }

  // ---- project milestones ----

  route(app, {
    method: 'GET', url: '/projects/:id/milestones', auth: 'optional', params: defineParams({ ...projectId, ...listParams }),
    schema: { summary: "A project's milestones", tags: ['milestones'], response: { 200: Type.Array(MilestoneSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await readableProject(request, input.id);
    const parents = input.include_parent_milestones && projectGroupId(ctx) !== null;
    const scope = { projectIds: [ctx.project.id], groupIds: parents ? ctx.lineage : [] };
    return present(await paginate(db, request, reply, milestonesQuery(db, scope, filters(input))), ctx);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/milestones/:milestone_id', auth: 'optional', params: defineParams({ ...projectId, ...milestoneId }),
    schema: { summary: 'A project milestone', tags: ['milestones'], response: { 200: MilestoneSchema } },
  }, async ({ request, input }) => {
    const ctx = await readableProject(request, input.id);
    return (await present([await projectMilestone(ctx, input.milestone_id)], ctx))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/milestones', auth: 'required',
    params: defineParams({ ...projectId, title: P.string(), ...writeFields }),
    schema: { summary: 'Create a project milestone', tags: ['milestones'], response: { 201: MilestoneSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await writableProject(request, input.id);
    const result = await createMilestone(db, { projectId: ctx.project.id }, projectRelatives(ctx), caller.user.id, input);
    if (!result.ok) throw validationFailed(result.errors);
    return reply.code(201).send((await present([result.milestone], ctx))[0]);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/milestones/:milestone_id', auth: 'required',
    params: defineParams({ ...projectId, ...milestoneId, ...updateFields }, updateRule),
    schema: { summary: 'Change, close or reopen a project milestone', tags: ['milestones'], response: { 200: MilestoneSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await writableProject(request, input.id);
    const row = await projectMilestone(ctx, input.milestone_id);
    const result = await updateMilestone(db, row, projectRelatives(ctx), caller.user.id, input);
    if (!result.ok) throw validationFailed(result.errors);
    return (await present([result.milestone], ctx))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/milestones/:milestone_id', auth: 'required',
    params: defineParams({ ...projectId, ...milestoneId }),
    schema: { summary: 'Delete a project milestone (its issues keep no milestone)', tags: ['milestones'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await writableProject(request, input.id);
    await deleteMilestone(db, await projectMilestone(ctx, input.milestone_id), caller.user.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/milestones/:milestone_id/promote', auth: 'required',
    params: defineParams({ ...projectId, ...milestoneId }),
    schema: { summary: "Promote a project milestone to its group's", tags: ['milestones'], response: { 200: MilestoneSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await writableProject(request, input.id);
    const g = projectGroupId(ctx);
    // The Service authorizes admin_milestone on the project's group too: a personal project has none.
    if (g === null) throw forbidden();
    const paths = (await namespacePathsById(db, [g])).get(g)!;
    if (!canOnGroup(await groupActor(db, caller.user, paths.lineage), 'admin_milestone', paths.namespace)) throw forbidden();
    const row = await projectMilestone(ctx, input.milestone_id);
    const projects = await projectsInNamespaces(db, [g]).clearSelect().select('projects.id').execute();
    const result = await promoteMilestone(db, row, g, projects.map((p) => p.id), caller.user.id);
    if (!result.ok) throw new ApiError(400, { message: result.message });
    return (await present([result.milestone]))[0];
  });

  /**
   * A milestone's merge requests the viewer may read (lib/api/milestone_responses.rb
   * milestone_issuables_for: MergeRequestsFinder by milestone, `label_priority` order), as MergeRequestBasic.
   */
  async function milestoneRequests(
    request: FastifyRequest, reply: FastifyReply, container: MergeRequestContainer, milestoneId: number, from: ReferenceContext,
  ) {
    const qb = (await visibleMergeRequests(db, request.caller?.user ?? null, container, false))
      .where('merge_requests.milestone_id', '=', milestoneId);
    const rows = await paginate(db, request, reply, orderMergeRequests(qb, 'label_priority', 'asc'));
    return presentMergeRequestsFor(request, rows, from);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/milestones/:milestone_id/merge_requests', auth: 'optional',
    params: defineParams({ ...projectId, ...milestoneId, ...paginationParams }),
    schema: {
      summary: "A project milestone's merge requests", tags: ['milestones'], response: { 200: Type.Array(MergeRequestBasicSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await readableProject(request, input.id);
    const m = await projectMilestone(ctx, input.milestone_id);
    const container = { project: { id: ctx.project.id, canRead: canReadMergeRequest(ctx.actor, ctx.project) } };
    return milestoneRequests(request, reply, container, m.id, { project: ctx.project.id });
  });

  // ---- group milestones ----

  route(app, {
    method: 'GET', url: '/groups/:id/milestones', auth: 'optional', params: defineParams({ ...groupId, ...listParams }),
    schema: { summary: "A group's milestones", tags: ['milestones'], response: { 200: Type.Array(MilestoneSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const scope = { projectIds: [], groupIds: input.include_parent_milestones ? ctx.lineage : [ctx.group.id] };
    return present(await paginate(db, request, reply, milestonesQuery(db, scope, filters(input))));
  });

  route(app, {
    method: 'GET', url: '/groups/:id/milestones/:milestone_id', auth: 'optional', params: defineParams({ ...groupId, ...milestoneId }),
    schema: { summary: 'A group milestone', tags: ['milestones'], response: { 200: MilestoneSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadGroup(request, input.id);
    return (await present([await groupMilestone(ctx, input.milestone_id)]))[0];
  });

  route(app, {
    method: 'POST', url: '/groups/:id/milestones', auth: 'required',
    params: defineParams({ ...groupId, title: P.string(), ...writeFields }),
    schema: { summary: 'Create a group milestone', tags: ['milestones'], response: { 201: MilestoneSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await writableGroup(request, input.id);
    const result = await createMilestone(db, { groupId: ctx.group.id }, await groupRelatives(ctx), caller.user.id, input);
    if (!result.ok) throw validationFailed(result.errors);
    return reply.code(201).send((await present([result.milestone]))[0]);
  });

  route(app, {
    method: 'PUT', url: '/groups/:id/milestones/:milestone_id', auth: 'required',
    params: defineParams({ ...groupId, ...milestoneId, ...updateFields }, updateRule),
    schema: { summary: 'Change, close or reopen a group milestone', tags: ['milestones'], response: { 200: MilestoneSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await writableGroup(request, input.id);
    const row = await groupMilestone(ctx, input.milestone_id);
    const result = await updateMilestone(db, row, await groupRelatives(ctx), caller.user.id, input);
    if (!result.ok) throw validationFailed(result.errors);
    return (await present([result.milestone]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/groups/:id/milestones/:milestone_id', auth: 'required', params: defineParams({ ...groupId, ...milestoneId }),
    schema: { summary: 'Delete a group milestone (its issues keep no milestone)', tags: ['milestones'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await writableGroup(request, input.id);
    await deleteMilestone(db, await groupMilestone(ctx, input.milestone_id), caller.user.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/groups/:id/milestones/:milestone_id/merge_requests', auth: 'optional',
    params: defineParams({ ...groupId, ...milestoneId, ...paginationParams }),
    schema: {
      summary: "A group milestone's merge requests", tags: ['milestones'], response: { 200: Type.Array(MergeRequestBasicSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const m = await groupMilestone(ctx, input.milestone_id);
    const container = { namespaceIds: await groupAndDescendants(request, ctx.group.id) };
    return milestoneRequests(request, reply, container, m.id, { group: ctx.group.id });
  });
};

export default milestones;
