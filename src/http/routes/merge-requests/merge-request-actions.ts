/**
 * Merging a merge request and what goes with it (lib/api/merge_requests.rb of the Service 15.2):
 * PUT …/merge (401 for a caller who may not merge, 405 when the request cannot be merged now,
 * 409 when `sha` is not the source head, merge when pipeline succeeds while its head pipeline
 * runs), GET …/merge_ref (the trial merge of the two heads, 400 when they conflict), POST
 * …/cancel_merge_when_pipeline_succeeds, PUT …/rebase (queued: 202 `rebase_in_progress`),
 * approvals in the CE form (POST …/approve and …/unapprove, GET …/approvals, PUT
 * …/reset_approvals for bots), subscribing, and time tracking.
 */
import { protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { MergeRequestRow } from '../../../db/tables/merge-requests.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { refTarget } from '../../../domain/repositories/git-read.ts';
import { mergeTree } from '../../../domain/merge-requests/mr-git.ts';
import { checkMergeStatus } from '../../../domain/merge-requests/merge-status.ts';
import {
  acceptMergeRequest, AUTO_MERGE_WAITS_FOR, ciAndDiscussionsAllow, requestHeadPipeline,
} from '../../../domain/merge-requests/accept.ts';
import { mergeableState } from '../../../domain/merge-requests/merge.ts';
import { canMergeMergeRequest, canUpdateMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import {
  findMergeRequestById, peopleOf, setSubscription, subscribedMergeRequestIds,
  replacePeople, totalTimeSpentOn, updateMergeRequestRow,
} from '../../../domain/merge-requests/merge-requests.queries.ts';
import {
  addMergeRequestTimeSpent, approveMergeRequest, cancelAutoMerge, REBASE_JOB, resetMergeRequestTimeSpent, setAutoMerge,
  setMergeRequestEstimate, unapproveMergeRequest,
} from '../../../domain/merge-requests/mr-actions.ts';
import { insertJob } from '../../../domain/background-jobs/background-jobs.queries.ts';
import { nowIso } from '../../../domain/clock.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { isBot } from '../../../domain/users/user-kind.ts';
import { MAX_DURATION_TEXT, formatDuration, parseDuration } from '../../../domain/issues/time-tracking.ts';
import { MAX_TIMELOG_SUMMARY } from '../../../domain/issues/time-tracking.queries.ts';
import { MergeRequestSchema } from '../../entities/merge-request.ts';
import { TimeStatsSchema } from '../../entities/issue.ts';
import { presentUserBasic, UserBasicSchema } from '../../entities/user.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { loadMergeRequest } from '../../loaders/merge-requests.ts';
import { apiError, forbidden, notAllowed, notFound, unauthorized, validationFailed } from '../../errors.ts';
import { defineParams, INT32_MAX, P } from '../../input/params.ts';
import { route } from '../../route.ts';
import { canPushToSourceBranch, sourceRefOf } from '../../../domain/merge-requests/fork-source.ts';
import { presentOne } from './merge-requests.ts';

const id = P.string({ description: 'ID or URL-encoded full path of the project' });
const oneParams = defineParams({ id, merge_request_iid: P.integer() });
const sha = P.optional(P.string({ maxLength: 64, description: 'the source head this is meant for' }));
const message = (description: string) => P.optional(P.string({ description }));
const mergeParams = defineParams({
  id, merge_request_iid: P.integer(),
  merge_commit_message: message('the merge commit message (the template by default)'),
  squash_commit_message: message('the squash commit message (the title by default)'),
  squash: P.optional(P.boolean()),
  should_remove_source_branch: P.optional(P.boolean()),
  merge_when_pipeline_succeeds: P.optional(P.boolean()),
  sha,
});
const approveParams = defineParams({
  id, merge_request_iid: P.integer(), sha, approval_password: P.optional(P.string({ maxLength: 255, description: 'ignored (EE)' })),
});
const rebaseParams = defineParams({ id, merge_request_iid: P.integer(), skip_ci: P.optional(P.boolean()) });
const duration = P.string({ maxLength: MAX_DURATION_TEXT, description: 'e.g. 3h30m' });
const estimateParams = defineParams({ id, merge_request_iid: P.integer(), duration });
const spendParams = defineParams({
  id, merge_request_iid: P.integer(), duration, summary: P.optional(P.string({ maxLength: MAX_TIMELOG_SUMMARY })),
});

const ApprovalsSchema = Type.Object({
  user_has_approved: Type.Boolean(),
  user_can_approve: Type.Boolean(),
  approved: Type.Boolean(),
  approved_by: Type.Array(Type.Object({ user: UserBasicSchema })),
}, { title: 'MergeRequestApprovals' });

function seconds(text: string): number | null {
  const n = parseDuration(text);
  return n === null || Math.abs(n) > INT32_MAX ? null : n;
}

const mergeRequestActions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const env = () => ciEnvFrom(db, config);

  async function load(request: FastifyRequest, input: { id: string; merge_request_iid: number }) {
    const ctx = await loadProject(request, input.id);
    return { ctx, ...(await loadMergeRequest(request, ctx, input.merge_request_iid)) };
  }

  const headPipeline = (mr: MergeRequestRow, head: string | null) => requestHeadPipeline(db, mr, head);

  route(app, {
    method: 'PUT', url: '/projects/:id/merge_requests/:merge_request_iid/merge', auth: 'required', params: mergeParams,
    schema: { summary: 'Merge a merge request', tags: ['merge_requests'], response: { 200: MergeRequestSchema } },
  }, async ({ request, input, caller }) => {
    const { ctx, mr, repo } = await load(request, input);
    // Merging is pushing to the target branch (can_be_merged_by?): 401 for anyone else.
    if (!canMergeMergeRequest(ctx.actor, ctx.project, await protectionRulesFor(db, ctx.project.id), mr.target_branch)) throw unauthorized();
    const head = await refTarget(repo.gitDir, sourceRefOf(mr));
    const pipeline = await headPipeline(mr, head);
    const automatically = Boolean(input.merge_when_pipeline_succeeds) && pipeline !== undefined
      && AUTO_MERGE_WAITS_FOR.includes(pipeline.status);
    if (!mergeableState(mr) || !head) throw notAllowed();
    const options = {
      sha: input.sha, squash: input.squash, mergeCommitMessage: input.merge_commit_message,
      squashCommitMessage: input.squash_commit_message, shouldRemoveSourceBranch: input.should_remove_source_branch,
    };
    if (automatically) {
      if (input.sha !== undefined && input.sha !== head) throw apiError(409, `SHA does not match HEAD of source branch: ${head}`);
      return presentOne(request, ctx, await setAutoMerge(db, mr, caller.user.id, options));
    }
    if (!await ciAndDiscussionsAllow(db, mr, ctx.project, head)) throw notAllowed();
    const result = await acceptMergeRequest(env(), ctx.project, mr, caller.user, options,
      (err) => request.log.error({ err }, 'could not run what follows a merge'));
    if (!result.ok) {
      if (result.reason === 'sha_mismatch') throw apiError(409, `SHA does not match HEAD of source branch: ${result.head}`);
      if (result.reason === 'not_allowed') throw notAllowed();
      if (result.reason === 'read_only') throw apiError(406, 'The repository is temporarily read-only. Please try again later.');
      throw apiError(406, 'Branch cannot be merged');
    }
    return presentOne(request, ctx, result.value);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/merge_ref', auth: 'optional', params: oneParams,
    schema: {
      summary: 'The trial merge of a merge request', tags: ['merge_requests'], response: { 200: Type.Object({ commit_id: Type.String() }) },
    },
  }, async ({ request, input }) => {
    const { mr, repo } = await load(request, input);
    const [source, target] = await Promise.all([
      refTarget(repo.gitDir, sourceRefOf(mr)), refTarget(repo.gitDir, `refs/heads/${mr.target_branch}`),
    ]);
    // MergeabilityCheckService(recheck: true): the Service computes the merge ref on this request too.
    if (mr.state !== 'opened' || !source || !target || !(await mergeTree(repo.gitDir, target, source)).clean) {
      throw apiError(400, 'Merge request is not mergeable');
    }
    await checkMergeStatus({ db, shards: config.storages }, mr.id);
    const fresh = await findMergeRequestById(db, mr.id);
    if (!fresh?.merge_ref_sha) throw apiError(400, 'Merge ref cannot be updated');
    return { commit_id: fresh.merge_ref_sha };
  });

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests/:merge_request_iid/cancel_merge_when_pipeline_succeeds', auth: 'required',
    params: oneParams,
    schema: {
      summary: 'Cancel merge when pipeline succeeds', tags: ['merge_requests'], response: { 201: Type.Object({ status: Type.String() }) },
    },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, mr, subject } = await load(request, input);
    // can_cancel_auto_merge?: whoever may update the request, or who set it.
    if (!canUpdateMergeRequest(ctx.actor, ctx.project, subject) && mr.merge_user_id !== caller.user.id) throw unauthorized();
    if (mr.merge_when_pipeline_succeeds !== 1) throw notAllowed();
    await cancelAutoMerge(db, mr, caller.user.id);
    reply.code(201);
    return { status: 'success' };
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/merge_requests/:merge_request_iid/rebase', auth: 'required', params: rebaseParams,
    schema: {
      summary: 'Rebase the source branch onto the target', tags: ['merge_requests'],
      response: { 202: Type.Object({ rebase_in_progress: Type.Boolean() }) },
    },
  }, async ({ request, reply, input, caller }) => {
    const { mr } = await load(request, input);
    // `authorize_push_to_merge_request!`: pushing to the source branch, in the source project (a
    // fork's own pushers, or the target's mergers when the request allows collaboration).
    if (!await canPushToSourceBranch(db, caller.user, mr)) throw forbidden('Cannot push to source branch');
    if (mr.rebase_in_progress === 1) {
      throw apiError(409, 'Failed to enqueue the rebase operation, possibly due to a long-lived transaction. Try again later.');
    }
    await db.transaction().execute(async (trx) => {
      await updateMergeRequestRow(trx, mr.id, { rebase_in_progress: 1, merge_error: null });
      await insertJob(trx, { kind: REBASE_JOB, payload: { mergeRequestId: mr.id, userId: caller.user.id }, maxAttempts: 1 });
    });
    app.jobs.wake();
    reply.code(202);
    return { rebase_in_progress: true };
  });

  async function approvals(request: FastifyRequest, mr: MergeRequestRow, canUpdate: boolean) {
    const ids = (await peopleOf(db, 'approvals', [mr.id])).get(mr.id) ?? [];
    const users = new Map((await findUsersByIds(db, ids)).map((u) => [u.id, u]));
    const viewer = request.caller?.user.id ?? null;
    const userOpts = { externalUrl: config.externalUrl, canReadProfile: false };
    const approvedBy = ids.flatMap((uid) => { const u = users.get(uid); return u ? [{ user: presentUserBasic(u, {}, userOpts) }] : []; });
    const has = viewer !== null && ids.includes(viewer);
    return {
      user_has_approved: has, user_can_approve: canUpdate && !has && mr.state === 'opened',
      approved: ids.length > 0, approved_by: approvedBy,
    };
  }

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/approvals', auth: 'optional', params: oneParams,
    schema: { summary: "A merge request's approvals", tags: ['merge_requests'], response: { 200: ApprovalsSchema } },
  }, async ({ request, input }) => {
    const { ctx, mr, subject } = await load(request, input);
    return approvals(request, mr, request.caller !== null && canUpdateMergeRequest(ctx.actor, ctx.project, subject));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests/:merge_request_iid/approve', auth: 'required', params: approveParams,
    schema: { summary: 'Approve a merge request', tags: ['merge_requests'], response: { 201: ApprovalsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, mr, subject, repo } = await load(request, input);
    if (input.sha !== undefined) {
      const head = await refTarget(repo.gitDir, sourceRefOf(mr));
      if (input.sha !== head) throw apiError(409, `SHA does not match HEAD of source branch: ${head ?? ''}`);
    }
    // can_approve?: approve_merge_request (update_merge_request) and not approved already.
    const can = canUpdateMergeRequest(ctx.actor, ctx.project, subject) && mr.state === 'opened';
    if (!can || !await approveMergeRequest(db, mr, caller.user.id)) throw unauthorized();
    reply.code(201);
    return approvals(request, mr, can);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests/:merge_request_iid/unapprove', auth: 'required', params: oneParams,
    schema: { summary: 'Withdraw an approval', tags: ['merge_requests'], response: { 201: ApprovalsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, mr, subject } = await load(request, input);
    if (!await unapproveMergeRequest(db, mr, caller.user.id)) throw notFound();
    reply.code(201);
    return approvals(request, mr, canUpdateMergeRequest(ctx.actor, ctx.project, subject));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/merge_requests/:merge_request_iid/reset_approvals', auth: 'required', params: oneParams,
    schema: { summary: "Clear a merge request's approvals (bots)", tags: ['merge_requests'], response: { 202: Type.Integer() } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, mr, subject } = await load(request, input);
    if (!canUpdateMergeRequest(ctx.actor, ctx.project, subject)) throw forbidden();
    // Only bots (project and group access tokens) reset approvals.
    if (!isBot(caller.user)) throw unauthorized();
    await db.transaction().execute((trx) => replacePeople(trx, 'approvals', mr.id, [], nowIso()));
    // The endpoint's value is `status :accepted`'s: the status code itself, as Grape writes it (`202`).
    return reply.code(202).type('application/json').send('202');
  });

  for (const [action, subscribe] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, {
      method: 'POST', url: `/projects/:id/merge_requests/:merge_request_iid/${action}`, auth: 'required', params: oneParams,
      schema: {
        summary: subscribe ? 'Subscribe to a merge request' : 'Unsubscribe from a merge request', tags: ['merge_requests'],
        response: { 201: MergeRequestSchema, 304: Type.Null() },
      },
    }, async ({ request, reply, input, caller }) => {
      const { ctx, mr } = await load(request, input);
      const subscribed = (await subscribedMergeRequestIds(db, caller.user.id, [mr.id])).has(mr.id);
      if (subscribed === subscribe) return reply.code(304).send();
      await setSubscription(db, caller.user.id, mr, subscribe, nowIso());
      reply.code(201);
      return presentOne(request, ctx, mr);
    });
  }

  async function stats(mrId: number) {
    const mr = (await findMergeRequestById(db, mrId))!;
    const total = await totalTimeSpentOn(db, mrId);
    return {
      time_estimate: mr.time_estimate, total_time_spent: total,
      human_time_estimate: formatDuration(mr.time_estimate), human_total_time_spent: formatDuration(total),
    };
  }

  async function adminMergeRequest(request: FastifyRequest, input: { id: string; merge_request_iid: number }) {
    const { ctx, mr } = await load(request, input);
    authorizeProject(ctx, 'admin_merge_request');
    return mr;
  }

  const tt = (path: string) => `/projects/:id/merge_requests/:merge_request_iid/${path}`;
  route(app, {
    method: 'POST', url: tt('time_estimate'), auth: 'required', params: estimateParams,
    schema: { summary: "Set a merge request's time estimate", tags: ['merge_requests'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const mr = await adminMergeRequest(request, input);
    const n = seconds(input.duration);
    if (n === null || n < 0) throw validationFailed({ time_estimate: ['has an invalid format'] });
    await setMergeRequestEstimate(db, mr, caller.user.id, n);
    return stats(mr.id);
  });

  route(app, {
    method: 'POST', url: tt('reset_time_estimate'), auth: 'required', params: oneParams,
    schema: { summary: "Reset a merge request's time estimate", tags: ['merge_requests'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const mr = await adminMergeRequest(request, input);
    await setMergeRequestEstimate(db, mr, caller.user.id, 0);
    return stats(mr.id);
  });

  route(app, {
    method: 'POST', url: tt('add_spent_time'), auth: 'required', params: spendParams,
    schema: { summary: 'Log time spent on a merge request', tags: ['merge_requests'], response: { 201: TimeStatsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const mr = await adminMergeRequest(request, input);
    const n = seconds(input.duration);
    if (n === null) throw validationFailed({ 'timelogs.time_spent': ["can't be blank"] });
    if (!await addMergeRequestTimeSpent(db, mr, caller.user.id, n, input.summary ?? null)) {
      throw validationFailed({ base: ['Time to subtract exceeds the total time spent'] });
    }
    reply.code(201);
    return stats(mr.id);
  });

  route(app, {
    method: 'POST', url: tt('reset_spent_time'), auth: 'required', params: oneParams,
    schema: { summary: "Reset a merge request's time spent", tags: ['merge_requests'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const mr = await adminMergeRequest(request, input);
    await resetMergeRequestTimeSpent(db, mr, caller.user.id);
    return stats(mr.id);
  });

  route(app, {
    method: 'GET', url: tt('time_stats'), auth: 'optional', params: oneParams,
    schema: { summary: "A merge request's time tracking stats", tags: ['merge_requests'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input }) => {
    const { mr } = await load(request, input);
    return stats(mr.id);
  });
};

export default mergeRequestActions;
