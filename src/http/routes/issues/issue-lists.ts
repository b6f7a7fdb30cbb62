/**
 * Issue lists (lib/api/issues.rb of the Service 15.2): a project's, a group's (its projects and
 * its sub-groups' that the viewer may read), the instance's (GET /issues: signed in, the
 * caller's own issues unless `scope=all`, which anonymous callers may ask for too), and the
 * issues of one milestone (lib/api/milestone_responses.rb). Every list applies the same
 * confidentiality rule to its rows and to its X-Total; searching counts against the search rate
 * limit.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { descendantGroupIds } from '../../../domain/namespaces/namespaces.queries.ts';
import {
  filterIssues, inMilestone, issuesShape, type IssueContainer, type IssueFilters, type IssuesShape,
} from '../../../domain/issues/issues.finder.ts';
import { orderIssues, type IssueOrder } from '../../../domain/issues/issue-orders.ts';
import { findMilestoneById } from '../../../domain/issues/issue-writes.queries.ts';
import { IssueSchema, presentIssues, type ReferenceContext } from '../../entities/issue.ts';
import { contextProjectPath, issueProjectPaths } from '../../loaders/issues.ts';
import { issuesList } from '../../loaders/issue-presenting.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { checkSearchRateLimit } from '../../search-rate-limit.ts';
import { notFound, unauthorized } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginationParams } from '../../lists/pagination.ts';
import { exactJson } from '../../entities/serializers.ts';
import { route } from '../../route.ts';
import { issueFilters, issueListParams, nonArchivedParam, projectContainer } from './issue-list-params.ts';

const projectListParams = defineParams({ id: P.string(), ...issueListParams, ...paginationParams });
const groupListParams = defineParams({ id: P.string(), ...issueListParams, ...nonArchivedParam, ...paginationParams });
const instanceListParams = defineParams({ ...issueListParams, ...nonArchivedParam, ...paginationParams });
const milestoneIssuesParams = defineParams({ id: P.string(), milestone_id: P.integer(), ...paginationParams });

/**
 * The presenter builds exactly the entity with flat strings, so JSON.stringify writes the page
 * (serializers.ts exactJson): a page of 20 issues written by fast-json-stringify cost more than
 * its label and count statements together.
 */
const IssueList = exactJson(Type.Array(IssueSchema));

/** The group and every group below it: a group's lists cover their projects. */
export async function groupAndDescendants(request: FastifyRequest, groupId: number): Promise<number[]> {
  return [groupId, ...(await descendantGroupIds(request.server.kiln.db, [groupId])).keys()];
}

const issueLists: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function page(
    request: FastifyRequest, reply: FastifyReply, shape: IssuesShape,
    o: {
      order: IssueOrder; sort: 'asc' | 'desc'; from: ReferenceContext; withLabelsDetails: boolean;
      single?: ReturnType<typeof contextProjectPath>;
    },
  ) {
    const rows = await issuesList.paginate(db, request, reply, orderIssues(shape, o.order, o.sort));
    const projects = o.single ?? await issueProjectPaths(db, rows.map((r) => r.project_id));
    return presentIssues(db, rows, {
      externalUrl: config.externalUrl, projects, viewerId: request.caller?.user.id ?? null, from: o.from,
      withLabelsDetails: o.withLabelsDetails,
    });
  }

  async function filtered(request: FastifyRequest, viewer: UserRow | null, container: IssueContainer, f: IssueFilters) {
    if (f.search) await checkSearchRateLimit(request);
    return filterIssues(await issuesShape(db, viewer, container, f.nonArchived ?? true), f, viewer);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/issues', auth: 'optional', params: projectListParams,
    schema: { summary: "A project's issues", tags: ['issues'], response: { 200: IssueList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    const viewer = request.caller?.user ?? null;
    const f = issueFilters(input, 'all');
    const container = projectContainer(ctx);
    const qb = await filtered(request, viewer, container, f);
    return page(request, reply, qb, {
      order: input.order_by, sort: input.sort, from: { project: ctx.project.id }, withLabelsDetails: input.with_labels_details,
      single: contextProjectPath(ctx),
    });
  });

  route(app, {
    method: 'GET', url: '/groups/:id/issues', auth: 'optional', params: groupListParams,
    schema: { summary: "The issues of a group's projects", tags: ['issues'], response: { 200: IssueList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const viewer = request.caller?.user ?? null;
    const f = issueFilters(input, 'all');
    const qb = await filtered(request, viewer, { namespaceIds: await groupAndDescendants(request, ctx.group.id) }, f);
    return page(request, reply, qb, {
      order: input.order_by, sort: input.sort, from: { group: ctx.group.id }, withLabelsDetails: input.with_labels_details,
    });
  });

  route(app, {
    method: 'GET', url: '/issues', auth: 'optional', params: instanceListParams,
    schema: { summary: 'Issues the caller may see (their own unless scope=all)', tags: ['issues'], response: { 200: IssueList } },
  }, async ({ request, reply, input }) => {
    // `authenticate! unless params[:scope] == 'all'`.
    if (!request.caller && input.scope !== 'all') throw unauthorized();
    const viewer = request.caller?.user ?? null;
    const f = issueFilters(input, 'created_by_me');
    const qb = await filtered(request, viewer, { instance: true }, f);
    return page(request, reply, qb, { order: input.order_by, sort: input.sort, from: null, withLabelsDetails: input.with_labels_details });
  });

  route(app, {
    method: 'GET', url: '/projects/:id/milestones/:milestone_id/issues', auth: 'optional', params: milestoneIssuesParams,
    schema: { summary: 'The issues of a project milestone', tags: ['issues'], response: { 200: IssueList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    if (!canOnProject(ctx.actor, 'read_milestone', ctx.project)) throw notFound('Project');
    const milestone = await findMilestoneById(db, input.milestone_id);
    if (!milestone || milestone.project_id !== ctx.project.id) throw notFound('Milestone');
    const viewer = request.caller?.user ?? null;
    // Issues of the milestone in this project the viewer may see (IssuesFinder with milestone_title).
    const container = projectContainer(ctx);
    const qb = inMilestone(await issuesShape(db, viewer, container, false), milestone.id);
    return page(request, reply, qb, {
      order: 'relative_position', sort: 'asc', from: { project: ctx.project.id }, withLabelsDetails: false, single: contextProjectPath(ctx),
    });
  });

  route(app, {
    method: 'GET', url: '/groups/:id/milestones/:milestone_id/issues', auth: 'optional', params: milestoneIssuesParams,
    schema: { summary: 'The issues of a group milestone', tags: ['issues'], response: { 200: IssueList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const milestone = await findMilestoneById(db, input.milestone_id);
    if (!milestone || milestone.group_id !== ctx.group.id) throw notFound('Milestone');
    const viewer = request.caller?.user ?? null;
    // The group's and its sub-groups' projects the viewer may read (Milestone#issues_visible_to_user).
    const qb = inMilestone(
      await issuesShape(db, viewer, { namespaceIds: await groupAndDescendants(request, ctx.group.id) }, false), milestone.id,
    );
    return page(request, reply, qb, { order: 'relative_position', sort: 'asc', from: { group: ctx.group.id }, withLabelsDetails: false });
  });
};

export default issueLists;
