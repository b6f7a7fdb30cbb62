/**
 * One merge request (lib/api/merge_requests.rb of the Service 15.2): opening one from a branch of
 * the project, reading it (the MergeRequest entity: `diff_refs`, `merge_status` and
 * `detailed_merge_status`, `changes_count`, `user.can_merge`, `subscribed` …), changing it —
 * title, description, target branch, labels (`labels`, `add_labels`, `remove_labels`),
 * assignees, reviewers, milestone, `state_event` close/reopen — and removing it (owners and
 * administrators, 204). A missing request and one the caller may not read answer the same
 * `404 Merge Request Not Found`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { MergeRequestRow } from '../../../db/tables/merge-requests.ts';
import { labelTitles } from '../../../domain/issues/issue-labels.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import {
  canMergeMergeRequest, canUpdateMergeRequest,
} from '../../../domain/merge-requests/merge-request.policy.ts';
import {
  createMergeRequest, deleteMergeRequest, updateMergeRequest, type WriteRefusal,
} from '../../../domain/merge-requests/write-merge-request.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { createMergeRequestPipeline } from '../../../domain/pipelines/merge-request-pipelines.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { divergedCommitsCount } from '../../../domain/merge-requests/mr-git.ts';
import { MergeRequestSchema, presentMergeRequests } from '../../entities/merge-request.ts';
import { contextProjectPath } from '../../loaders/issues.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { loadMergeRequest } from '../../loaders/merge-requests.ts';
import { forbidden, messageList, validationFailed, ApiError } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { route } from '../../route.ts';
import { isStorableId } from '../../../db/constraints.ts';
import {
  canAllowCollaboration, defaultMergeRequestTarget, inSameForkNetwork, sourceRefOf,
} from '../../../domain/merge-requests/fork-source.ts';

const labelsParam = (description: string) => P.optional(P.array(P.name(), { commaSeparated: true, description }));
const userIds = (description: string) => P.optional(P.array(P.integer({ minimum: 0 }), { commaSeparated: true, description }));
const branch = (description: string) => P.name({ description });

const createParams = defineParams({
  id: P.string(),
  source_branch: branch('the branch to merge'),
  target_branch: branch('the branch to merge into'),
  title: P.name(),
  description: P.optional(P.string({ description: 'at most 1,048,576 characters' })),
  labels: labelsParam('comma-separated label titles; missing ones are created'),
  assignee_id: P.optional(P.integer({ minimum: 0 })),
  assignee_ids: userIds('one user id (Free tier)'),
  reviewer_ids: userIds('one user id (Free tier)'),
  milestone_id: P.optional(P.integer({ minimum: 0 })),
  remove_source_branch: P.optional(P.boolean()),
  squash: P.optional(P.boolean()),
  allow_collaboration: P.optional(P.boolean({ description: "a fork's request: the target's mergers may push to its source branch" })),
  allow_maintainer_to_push: P.optional(P.boolean({ description: 'deprecated: allow_collaboration' })),
  target_project_id: P.optional(P.integer({
    minimum: 1, description: 'a project of the fork network to open the request in (default: the upstream of a fork)',
  })),
});

const updateParams = defineParams({
  id: P.string(),
  merge_request_iid: P.integer(),
  title: P.optional(P.name()),
  description: P.optional(P.string()),
  target_branch: P.optional(branch('a new target branch')),
  labels: labelsParam('replaces the labels'),
  add_labels: labelsParam('labels to add'),
  remove_labels: labelsParam('labels to remove'),
  assignee_id: P.optional(P.integer({ minimum: 0 })),
  assignee_ids: userIds('one user id; [] or 0 clears'),
  reviewer_ids: userIds('one user id; [] or 0 clears'),
  milestone_id: P.optional(P.integer({ minimum: 0, description: '0 removes the milestone' })),
  state_event: P.optional(P.oneOf(['close', 'reopen'] as const)),
  remove_source_branch: P.optional(P.boolean()),
  squash: P.optional(P.boolean()),
  discussion_locked: P.optional(P.boolean()),
  allow_collaboration: P.optional(P.boolean()),
  allow_maintainer_to_push: P.optional(P.boolean()),
}, {
  atLeastOneOf: [[
    'title', 'description', 'target_branch', 'labels', 'add_labels', 'remove_labels', 'assignee_id', 'assignee_ids', 'reviewer_ids',
    'milestone_id', 'state_event', 'remove_source_branch', 'squash', 'discussion_locked', 'allow_collaboration', 'allow_maintainer_to_push',
  ]],
});

const oneParams = defineParams({
  id: P.string(),
  merge_request_iid: P.integer(),
  render_html: P.optional(P.boolean({ description: 'ignored: kiln renders no HTML here' })),
  include_diverged_commits_count: P.optional(P.boolean()),
  include_rebase_in_progress: P.optional(P.boolean()),
});
const deleteParams = defineParams({ id: P.string(), merge_request_iid: P.integer() });

const assigneesOf = (input: { assignee_ids?: number[]; assignee_id?: number }) =>
  input.assignee_ids ?? (input.assignee_id !== undefined ? [input.assignee_id] : undefined);

/** The model's refusals as lib/api/merge_requests.rb handle_merge_request_errors! answers them. */
export function refusal(r: WriteRefusal): ApiError {
  if (r.reason === 'same_branch') return messageList(422, ["You can't use same project/branch for source and target"]);
  if (r.reason === 'exists') return messageList(409, [`Another open merge request already exists for this source branch: !${r.iid}`]);
  return validationFailed(r.errors);
}

/**
 * MergeRequests::BuildService#find_target_project: the project `target_project_id` names when the
 * caller may open requests in it, else the source's default target (its upstream, for a fork),
 * else the source itself.
 */
async function targetProjectOf(request: FastifyRequest, source: ProjectContext, targetId: number | undefined): Promise<ProjectContext> {
  const { db } = request.server.kiln;
  const usable = (c: ProjectContext | null): c is ProjectContext =>
    c !== null && canOnProject(c.actor, 'create_merge_request_in', c.project);
  if (targetId !== undefined) {
    if (targetId === source.project.id) return source;
    const named = isStorableId(targetId) ? await loadProject(request, String(targetId)).catch(() => null) : null;
    if (usable(named)) return named;
  }
  const fallback = await defaultMergeRequestTarget(db, source.project);
  if (fallback.id === source.project.id) return source;
  const upstream = await loadProject(request, String(fallback.id)).catch(() => null);
  return usable(upstream) ? upstream : source;
}

function checkTitle(title: string | undefined): void {
  if (title !== undefined && title.trim() === '') throw validationFailed({ title: ["can't be blank"] });
}

/** One request as the MergeRequest entity, for a project's routes. */
export async function presentOne(
  request: FastifyRequest, ctx: ProjectContext, mr: MergeRequestRow,
  o: { includeRebaseInProgress?: boolean; divergedCommitsCount?: number } = {},
) {
  const { db, config } = request.server.kiln;
  const [one] = await presentMergeRequests(db, [mr], {
    externalUrl: config.externalUrl, projects: contextProjectPath(ctx), viewerId: request.caller?.user.id ?? null,
    from: { project: ctx.project.id },
    full: { canMerge: canMergeMergeRequest(ctx.actor, ctx.project, await protectionRulesFor(db, ctx.project.id), mr.target_branch), ...o },
  });
  return one;
}

const mergeRequests: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests', auth: 'required', params: createParams,
    schema: { summary: 'Open a merge request', tags: ['merge_requests'], response: { 201: MergeRequestSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    // authorize! :create_merge_request_from (the source project, the one named).
    authorizeProject(ctx, 'create_merge_request_from');
    const target = await targetProjectOf(request, ctx, input.target_project_id);
    if (target.project.id === ctx.project.id) authorizeProject(ctx, 'create_merge_request_in');
    // MergeRequest#validate_fork: a target outside the source's fork network.
    else if (!await inSameForkNetwork(db, ctx.project.id, target.project.id)) {
      throw messageList(422, ['Source project is not a fork of the target project']);
    }
    checkTitle(input.title);
    const fork = target.project.id === ctx.project.id ? undefined : {
      project: ctx.project, gitDir: projectRepository(config.storages, ctx.project).gitDir, shards: config.storages,
      // MergeRequest#can_allow_collaboration? (pushing to the fork, and a collaborative push possible at all).
      canAllowCollaboration: await canAllowCollaboration(db, caller.user, {
        iid: 0, project_id: target.project.id, source_project_id: ctx.project.id, source_branch: input.source_branch,
      }),
    };
    const result = await createMergeRequest(db, {
      where: { project: target.project, lineage: target.lineage }, user: caller.user, actor: target.actor,
      gitDir: projectRepository(config.storages, target.project).gitDir,
    }, {
      title: input.title, description: input.description, sourceBranch: input.source_branch, targetBranch: input.target_branch,
      labels: input.labels ? labelTitles(input.labels) : undefined, assigneeIds: assigneesOf(input), reviewerIds: input.reviewer_ids,
      milestoneId: input.milestone_id, removeSourceBranch: input.remove_source_branch, squash: input.squash,
      allowCollaboration: input.allow_collaboration ?? input.allow_maintainer_to_push,
    }, fork);
    if (!result.ok) throw refusal(result);
    // MergeRequests::AfterCreateService: a merge request pipeline, if some job asks for one, after the answer.
    const created = result.value;
    setImmediate(() => {
      createMergeRequestPipeline(ciEnvFrom(db, config), created, caller.user.id)
        .catch((err: unknown) => request.log.error({ err }, 'could not create the pipeline of a merge request'));
    });
    reply.code(201);
    return presentOne(request, target, result.value);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid', auth: 'optional', params: oneParams,
    schema: { summary: 'One merge request', tags: ['merge_requests'], response: { 200: MergeRequestSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const { mr, repo } = await loadMergeRequest(request, ctx, input.merge_request_iid);
    let diverged: number | undefined;
    if (input.include_diverged_commits_count) diverged = await divergedCommitsCount(repo.gitDir, sourceRefOf(mr), mr.target_branch);
    return presentOne(request, ctx, mr, { includeRebaseInProgress: input.include_rebase_in_progress, divergedCommitsCount: diverged });
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/merge_requests/:merge_request_iid', auth: 'required', params: updateParams,
    schema: { summary: 'Change, close or reopen a merge request', tags: ['merge_requests'], response: { 200: MergeRequestSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const { mr, subject, repo } = await loadMergeRequest(request, ctx, input.merge_request_iid);
    if (!canUpdateMergeRequest(ctx.actor, ctx.project, subject)) throw forbidden();
    checkTitle(input.title);
    const collaboration = input.allow_collaboration ?? input.allow_maintainer_to_push;
    const result = await updateMergeRequest(db, {
      where: { project: ctx.project, lineage: ctx.lineage }, user: caller.user, actor: ctx.actor, gitDir: repo.gitDir,
      canAllowCollaboration: collaboration !== undefined && await canAllowCollaboration(db, caller.user, mr),
    }, mr, {
      title: input.title, description: input.description, targetBranch: input.target_branch,
      labels: input.labels ? labelTitles(input.labels) : undefined,
      addLabels: input.add_labels ? labelTitles(input.add_labels) : undefined,
      removeLabels: input.remove_labels ? labelTitles(input.remove_labels) : undefined,
      assigneeIds: assigneesOf(input), reviewerIds: input.reviewer_ids, milestoneId: input.milestone_id,
      removeSourceBranch: input.remove_source_branch, squash: input.squash, discussionLocked: input.discussion_locked,
      stateEvent: input.state_event, allowCollaboration: collaboration,
    });
    if (!result.ok) throw refusal(result);
    return presentOne(request, ctx, result.value);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/merge_requests/:merge_request_iid', auth: 'required', params: deleteParams,
    schema: { summary: 'Remove a merge request (owners and administrators)', tags: ['merge_requests'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    const { mr } = await loadMergeRequest(request, ctx, input.merge_request_iid);
    if (!canOnProject(ctx.actor, 'destroy_merge_request', ctx.project)) throw forbidden();
    await deleteMergeRequest(db, mr.id);
    return reply.code(204).send();
  });
};

export default mergeRequests;
