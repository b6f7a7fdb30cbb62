/**
 * What hangs off one issue besides its links, time tracking and history (lib/api/issues.rb,
 * subscriptions.rb of the Service 15.2; doc/api/issues.md): subscribing and unsubscribing (304
 * when already so), its participants, the merge requests that close it or mention it, its user
 * agent detail (administrators only) and its place in a manually ordered list.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { findUserAgentDetail } from '../../../domain/spam/user-agent-details.queries.ts';
import { presentUserAgentDetail, UserAgentDetailSchema } from '../../entities/user-agent-detail.ts';
import { Type } from 'typebox';
import type { IssueRow } from '../../../db/tables/issues.ts';
import type { UserRow } from '../../../db/types.ts';
import { canReadIssue, canUpdateIssue } from '../../../domain/issues/issue.policy.ts';
import { findIssueById, subscribedIssueIds } from '../../../domain/issues/issues.queries.ts';
import {
  participantIds, reorderIssue, setIssueSubscription, 
} from '../../../domain/issues/issue-actions.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { ApiError, forbidden, notFound, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import { loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { issueSubject, loadIssue } from '../../loaders/issues.ts';
import { presentIssuesFor } from '../../loaders/issue-presenting.ts';
import { IssueSchema } from '../../entities/issue.ts';
import { MergeRequestBasicSchema } from '../../entities/merge-request.ts';
import { presentMergeRequestsFor } from '../../loaders/merge-request-presenting.ts';
import type { MergeRequestRow } from '../../../db/tables/merge-requests.ts';
import { requestsNamingIssue } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { closingIssueIids, mentionedIssueIids } from '../../../domain/merge-requests/merge.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { presentUserBasic, UserBasicSchema } from '../../entities/user.ts';
import { route } from '../../route.ts';

const id = P.string({ description: 'ID or URL-encoded full path of the project' });
const issueParams = defineParams({ id, issue_iid: P.integer() });
const listParams = defineParams({ id, issue_iid: P.integer(), ...paginationParams });
const reorderParams = defineParams({
  id, issue_iid: P.integer(),
  move_after_id: P.optional(P.integer({ description: 'the id of the issue this one goes after' })),
  move_before_id: P.optional(P.integer({ description: 'the id of the issue this one goes before' })),
});



const issueActions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function readable(request: FastifyRequest, input: { id: string; issue_iid: number }) {
    const ctx = await loadProject(request, input.id);
    return { ctx, ...(await loadIssue(request, ctx, input.issue_iid)) };
  }

  async function presentOne(request: FastifyRequest, ctx: ProjectContext, issueId: number) {
    const issue = (await findIssueById(db, issueId))!;
    return (await presentIssuesFor(request, [issue], { project: ctx.project.id }, { includeSubscribed: true }))[0];
  }

  for (const [action, subscribe] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, {
      method: 'POST', url: `/projects/:id/issues/:issue_iid/${action}`, auth: 'required', params: issueParams,
      schema: {
        summary: subscribe ? 'Subscribe to an issue' : 'Unsubscribe from an issue', tags: ['issues'],
        response: { 201: IssueSchema, 304: Type.Null() },
      },
    }, async ({ request, reply, input, caller }) => {
      const { ctx, issue } = await readable(request, input);
      const subscribed = (await subscribedIssueIds(db, caller.user.id, [issue.id])).has(issue.id);
      // lib/api/subscriptions.rb: `not_modified!` when already in the state asked for.
      if (subscribed === subscribe) return reply.code(304).send();
      await setIssueSubscription(db, caller.user.id, issue, subscribe);
      reply.code(201);
      return presentOne(request, ctx, issue.id);
    });
  }

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/participants', auth: 'optional', params: listParams,
    schema: { summary: "An issue's participants", tags: ['issues'], response: { 200: Type.Array(UserBasicSchema) } },
  }, async ({ request, reply, input }) => {
    const { ctx, issue, subject } = await readable(request, input);
    const ids = await participantIds(db, issue);
    const users = new Map((await findUsersByIds(db, ids)).map((u) => [u.id, u]));
    // Issue#visible_participants: only those who may read the issue themselves (a confidential
    // issue's mention of a guest does not make them a participant).
    const visible: UserRow[] = [];
    for (const userId of ids) {
      const user = users.get(userId);
      if (!user) continue;
      const actor = await projectActor(db, user, ctx.project.id, ctx.lineage);
      if (canReadIssue(actor, ctx.project, subject)) visible.push(user);
    }
    const userOpts = { externalUrl: config.externalUrl, canReadProfile: false };
    return paginateArray(request, reply, visible).map((u) => presentUserBasic(u, {}, userOpts));
  });

  for (const [path, summary] of [
    ['closed_by', 'Merge requests that close an issue on merge'], ['related_merge_requests', 'Merge requests that mention an issue'],
  ] as const) {
    // Requests of the issue's project the viewer may read: open ones whose description closes it
    // (Issue#closed_by_merge_requests), or any that mention it (Issue#related_merge_requests).
    const picks = path === 'closed_by'
      ? (mr: MergeRequestRow, iid: number) => (mr.state === 'opened' || mr.state === 'locked')
        && closingIssueIids(mr.description).includes(iid)
      : (mr: MergeRequestRow, iid: number) => mentionedIssueIids(`${mr.title}\n${mr.description ?? ''}`).includes(iid);
    route(app, {
      method: 'GET', url: `/projects/:id/issues/:issue_iid/${path}`, auth: 'optional', params: listParams,
      schema: { summary, tags: ['issues'], response: { 200: Type.Array(MergeRequestBasicSchema) } },
    }, async ({ request, reply, input }) => {
      const { ctx, issue } = await readable(request, input);
      const rows = canReadMergeRequest(ctx.actor, ctx.project)
        ? (await requestsNamingIssue(db, ctx.project.id, issue.iid)).filter((mr) => picks(mr, issue.iid)) : [];
      return presentMergeRequestsFor(request, paginateArray(request, reply, rows), { project: ctx.project.id });
    });
  }

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/user_agent_detail', auth: 'required', params: issueParams,
    schema: { summary: "Where an issue was submitted from (administrators)", tags: ['issues'], response: { 200: UserAgentDetailSchema } },
  }, async ({ request, input, caller }) => {
    // `authenticated_as_admin!` comes before the issue is looked up.
    if (caller.user.admin !== 1) throw forbidden();
    const { issue } = await readable(request, input);
    const detail = await findUserAgentDetail(db, 'Issue', issue.id);
    if (!detail) throw notFound('UserAgentDetail');
    return presentUserAgentDetail(detail);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/issues/:issue_iid/reorder', auth: 'required', params: reorderParams,
    schema: { summary: 'Reorder an issue', tags: ['issues'], response: { 200: IssueSchema } },
  }, async ({ request, input }) => {
    const { ctx, issue, subject } = await readable(request, input);
    if (!canUpdateIssue(ctx.actor, ctx.project, subject)) throw forbidden();
    // Issues::ReorderService: no neighbour named is nothing to do (422); a neighbour is an issue
    // of the same project the caller may update, and none of them found is a missing record.
    const ids = [input.move_after_id, input.move_before_id].map((n) => (n !== undefined && n > 0 ? n : null));
    if (ids.every((n) => n === null)) throw new ApiError(422, { message: { error: 'Unprocessable Entity' } });
    const [after, before] = await Promise.all(ids.map((n) => (n === null ? null : neighbour(request, ctx, issue, n))));
    if (!after && !before) throw recordNotFound();
    await reorderIssue(db, issue, after, before);
    return presentOne(request, ctx, issue.id);
  });

  async function neighbour(request: FastifyRequest, ctx: ProjectContext, issue: IssueRow, neighbourId: number): Promise<IssueRow | null> {
    const other = await findIssueById(db, neighbourId);
    if (!other || other.project_id !== issue.project_id || other.id === issue.id) return null;
    return canUpdateIssue(ctx.actor, ctx.project, await issueSubject(db, other)) ? other : null;
  }
};

export default issueActions;
