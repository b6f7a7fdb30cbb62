/**
 * Merge request lists (lib/api/merge_requests.rb of the Service 15.2): a project's, a group's
 * (its projects and its sub-groups'), the instance's (GET /merge_requests: signed in, the
 * caller's own unless `scope=all`), with the documented filters and orders; `view=simple` answers
 * the short form (id, iid, project_id, title, description, state, dates, web_url).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import type { SelectQueryBuilder } from 'kysely';
import type { DB } from '../../../db/types.ts';
import {
  filterMergeRequestsShape, MERGE_REQUEST_ORDERS, MERGE_REQUEST_STATES, mergeRequestsShape, orderMergeRequestsShape,
  type MergeRequestContainer, type MergeRequestFilters, type MergeRequestOrder, type MergeRequestsFrom, type MergeRequestsShape,
  type Special,
} from '../../../domain/merge-requests/merge-requests.finder.ts';
import {
  MERGE_REQUEST_LIST_COLUMNS, MergeRequestBasicSchema, presentMergeRequests, type MergeRequestListRow,
} from '../../entities/merge-request.ts';
import { exactJson } from '../../entities/serializers.ts';
import type { ReferenceContext } from '../../entities/issue.ts';
import { contextProjectPath, issueProjectPaths } from '../../loaders/issues.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { checkSearchRateLimit } from '../../search-rate-limit.ts';
import { invalidParams, unauthorized } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginationParams, ShapedList } from '../../lists/pagination.ts';
import { route } from '../../route.ts';
import { groupAndDescendants } from '../issues/issue-lists.ts';

const titles = (description: string) => P.optional(P.array(P.name(), { commaSeparated: true, description }));
const noneAny = (description: string) => P.optional(P.string({ maxLength: 255, description }));

export const mergeRequestListParams = {
  state: P.optional(P.oneOf(MERGE_REQUEST_STATES, { default: 'all' })),
  order_by: P.optional(P.oneOf(MERGE_REQUEST_ORDERS, { default: 'created_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  milestone: P.optional(P.name({ description: 'milestone title; None, Any' })),
  view: P.optional(P.oneOf(['simple'] as const)),
  labels: titles('comma-separated label titles (all must match); None, Any'),
  with_labels_details: P.optional(P.boolean({ default: false })),
  with_merge_status_recheck: P.optional(P.boolean({ description: 'ignored: the status is rechecked after every push' })),
  created_after: P.optional(P.dateTime()),
  created_before: P.optional(P.dateTime()),
  updated_after: P.optional(P.dateTime()),
  updated_before: P.optional(P.dateTime()),
  scope: P.optional(P.oneOf(['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const)),
  author_id: P.optional(P.integer()),
  author_username: P.optional(P.name()),
  assignee_id: noneAny('assignee user id; None, Any'),
  assignee_username: P.optional(P.name()),
  reviewer_id: noneAny('reviewer user id; None, Any'),
  reviewer_username: P.optional(P.name()),
  my_reaction_emoji: noneAny('emoji the caller awarded; None, Any'),
  source_branch: P.optional(P.name()),
  target_branch: P.optional(P.name()),
  search: P.optional(P.name({ description: 'text in title or description' })),
  in: P.optional(P.array(P.oneOf(['title', 'description'] as const), { commaSeparated: true })),
  wip: P.optional(P.oneOf(['yes', 'no'] as const, { description: 'drafts only, or none' })),
  not: P.optional(P.object({
    labels: titles('none of these labels'),
    milestone: P.optional(P.name()),
    author_id: P.optional(P.integer()),
    author_username: P.optional(P.name()),
    assignee_id: P.optional(P.integer()),
    assignee_username: P.optional(P.name()),
    reviewer_id: P.optional(P.integer()),
    reviewer_username: P.optional(P.name()),
    my_reaction_emoji: P.optional(P.name()),
    source_branch: P.optional(P.name()),
    target_branch: P.optional(P.name()),
  }, { description: 'negated filters' })),
};

const projectListParams = defineParams({
  id: P.string(), ...mergeRequestListParams, iids: P.optional(P.array(P.integer(), { description: 'only these iids' })),
  ...paginationParams,
});
const nonArchived = { non_archived: P.optional(P.boolean({ default: true })) };
const groupListParams = defineParams({ id: P.string(), ...mergeRequestListParams, ...nonArchived, ...paginationParams });
const instanceListParams = defineParams({ ...mergeRequestListParams, ...nonArchived, ...paginationParams });

const SimpleSchema = Type.Object({
  id: Type.Integer(), iid: Type.Integer(), project_id: Type.Integer(), title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]), state: Type.String(), created_at: Type.String(), updated_at: Type.String(),
  web_url: Type.String(),
}, { title: 'MergeRequestSimple' });
// The presenters build exactly these objects: JSON.stringify writes a page rather than fast-json-stringify,
// which also had to validate each answer against the union's branches to pick one (entities/serializers.ts).
const ListSchema = exactJson(Type.Union([Type.Array(MergeRequestBasicSchema), Type.Array(SimpleSchema)]));

type Input = Partial<Record<string, unknown>> & {
  state?: MergeRequestFilters['state']; milestone?: string; labels?: string[]; created_after?: string; created_before?: string;
  updated_after?: string; updated_before?: string; scope?: string; author_id?: number; author_username?: string; assignee_id?: string;
  assignee_username?: string; reviewer_id?: string; reviewer_username?: string; my_reaction_emoji?: string; source_branch?: string;
  target_branch?: string; search?: string; in?: ('title' | 'description')[]; wip?: 'yes' | 'no'; iids?: number[]; non_archived?: boolean;
  not?: {
    labels?: string[]; milestone?: string; author_id?: number; author_username?: string; assignee_id?: number; assignee_username?: string;
    reviewer_id?: number; reviewer_username?: string; my_reaction_emoji?: string; source_branch?: string; target_branch?: string;
  };
};

function special<T>(value: string, parse: (v: string) => T): Special<T> {
  const lower = value.toLowerCase();
  if (lower === 'none') return { none: true };
  if (lower === 'any') return { any: true };
  return { value: parse(value) };
}

function userIdFilter(name: string, value: string | undefined): Special<number> | undefined {
  if (value === undefined) return undefined;
  const s = special(value, (v) => (/^\d+$/.test(v.trim()) ? Number(v) : NaN));
  if ('value' in s && (!Number.isSafeInteger(s.value) || s.value > 2_147_483_647)) throw invalidParams([`${name} should be an integer, none or any`]);
  return s;
}

/** The finder's filters from a route's validated input (MergeRequestsFinder params). */
export function mergeRequestFilters(input: Input, defaultScope: 'all' | 'created_by_me'): MergeRequestFilters {
  for (const [a, b] of [['author_id', 'author_username'], ['assignee_id', 'assignee_username'], ['reviewer_id', 'reviewer_username']]) {
    if (input[a] !== undefined && input[b] !== undefined) throw invalidParams([`${a}, ${b} are mutually exclusive`]);
  }
  const labels = input.labels && input.labels.length > 0 ? input.labels : undefined;
  let labelFilter: Special<string[]> | undefined;
  if (labels) {
    const lower = labels.length === 1 ? labels[0].toLowerCase() : '';
    labelFilter = lower === 'none' || lower === 'no label' ? { none: true } : lower === 'any' ? { any: true } : { value: labels };
  }
  return {
    scope: (input.scope ?? defaultScope).replace(/-/g, '_') as MergeRequestFilters['scope'],
    state: input.state,
    labels: labelFilter,
    milestone: input.milestone !== undefined ? special(input.milestone, (v) => v) : undefined,
    authorId: input.author_id, authorUsername: input.author_username,
    assignee: userIdFilter('assignee_id', input.assignee_id), assigneeUsername: input.assignee_username,
    reviewer: userIdFilter('reviewer_id', input.reviewer_id), reviewerUsername: input.reviewer_username,
    myReactionEmoji: input.my_reaction_emoji !== undefined ? special(input.my_reaction_emoji, (v) => v) : undefined,
    iids: input.iids, sourceBranch: input.source_branch, targetBranch: input.target_branch,
    search: input.search, searchIn: input.in, wip: input.wip === undefined ? undefined : input.wip === 'yes',
    createdAfter: input.created_after, createdBefore: input.created_before, updatedAfter: input.updated_after,
    updatedBefore: input.updated_before, nonArchived: input.non_archived,
    not: input.not ? {
      labels: input.not.labels, milestone: input.not.milestone, authorId: input.not.author_id, authorUsername: input.not.author_username,
      assigneeId: input.not.assignee_id, assigneeUsername: input.not.assignee_username, reviewerId: input.not.reviewer_id,
      reviewerUsername: input.not.reviewer_username, myReactionEmoji: input.not.my_reaction_emoji,
      sourceBranch: input.not.source_branch, targetBranch: input.not.target_branch,
    } : undefined,
  };
}

/**
 * Every merge request list's page, its statements compiled once per filter shape
 * (merge-requests.finder.ts), reading the columns the list entity shows (MERGE_REQUEST_LIST_COLUMNS).
 */
const mergeRequestsList = new ShapedList('merge_requests', {
  from: (db) => db.selectFrom('merge_requests'),
  select: (qb: MergeRequestsFrom) => qb.select(MERGE_REQUEST_LIST_COLUMNS) as unknown as
    SelectQueryBuilder<DB, 'merge_requests', MergeRequestListRow>,
  id: 'merge_requests.id',
});

const mergeRequestLists: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  /** A page of the query as the list entity (or its simple view). */
  async function page(
    request: FastifyRequest, reply: FastifyReply, shape: MergeRequestsShape,
    o: { order: MergeRequestOrder; sort: 'asc' | 'desc'; from: ReferenceContext; withLabelsDetails: boolean; simple: boolean;
      single?: ReturnType<typeof contextProjectPath> },
  ) {
    const rows = await mergeRequestsList.paginate(db, request, reply, orderMergeRequestsShape(shape, o.order, o.sort));
    const projects = o.single ?? await issueProjectPaths(db, rows.map((r) => r.project_id));
    if (o.simple) {
      return rows.map((r) => ({
        id: r.id, iid: r.iid, project_id: r.project_id, title: r.title, description: r.description, state: r.state,
        created_at: r.created_at, updated_at: r.updated_at,
        web_url: `${config.externalUrl}/${projects.get(r.project_id)!.fullPath}/-/merge_requests/${r.iid}`,
      }));
    }
    return presentMergeRequests(db, rows, {
      externalUrl: config.externalUrl, projects, viewerId: request.caller?.user.id ?? null, from: o.from,
      withLabelsDetails: o.withLabelsDetails,
    });
  }

  async function filtered(request: FastifyRequest, viewer: UserRow | null, container: MergeRequestContainer, f: MergeRequestFilters) {
    if (f.search) await checkSearchRateLimit(request);
    return filterMergeRequestsShape(await mergeRequestsShape(db, viewer, container, f.nonArchived ?? true), f, viewer);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests', auth: 'optional', params: projectListParams,
    schema: { summary: "A project's merge requests", tags: ['merge_requests'], response: { 200: ListSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    const viewer = request.caller?.user ?? null;
    const qb = await filtered(request, viewer, {
      project: { id: ctx.project.id, canRead: canReadMergeRequest(ctx.actor, ctx.project) },
    }, mergeRequestFilters(input, 'all'));
    return page(request, reply, qb, {
      order: input.order_by, sort: input.sort, from: { project: ctx.project.id }, withLabelsDetails: input.with_labels_details,
      simple: input.view === 'simple', single: contextProjectPath(ctx),
    });
  });

  route(app, {
    method: 'GET', url: '/groups/:id/merge_requests', auth: 'optional', params: groupListParams,
    schema: { summary: "The merge requests of a group's projects", tags: ['merge_requests'], response: { 200: ListSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const viewer = request.caller?.user ?? null;
    const container = { namespaceIds: await groupAndDescendants(request, ctx.group.id) };
    const qb = await filtered(request, viewer, container, mergeRequestFilters(input, 'all'));
    return page(request, reply, qb, {
      order: input.order_by, sort: input.sort, from: { group: ctx.group.id }, withLabelsDetails: input.with_labels_details,
      simple: input.view === 'simple',
    });
  });

  route(app, {
    method: 'GET', url: '/merge_requests', auth: 'optional', params: instanceListParams,
    schema: {
      summary: 'Merge requests the caller may see (their own unless scope=all)', tags: ['merge_requests'], response: { 200: ListSchema },
    },
  }, async ({ request, reply, input }) => {
    if (!request.caller && input.scope !== 'all') throw unauthorized();
    const viewer = request.caller?.user ?? null;
    const qb = await filtered(request, viewer, { instance: true }, mergeRequestFilters(input, 'created_by_me'));
    return page(request, reply, qb, {
      order: input.order_by, sort: input.sort, from: null, withLabelsDetails: input.with_labels_details, simple: input.view === 'simple',
    });
  });
};

export default mergeRequestLists;
