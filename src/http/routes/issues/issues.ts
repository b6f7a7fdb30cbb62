/**
 * One issue (lib/api/issues.rb of the Service 15.2): opening one in a project, reading it (with
 * `subscribed`), by its global id for administrators, changing it, closing and reopening it
 * through `state_event`, and removing it (owners and administrators, 204). A missing issue and
 * one the caller may not read answer the same `404 Issue Not Found`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { requestOrigin } from '../../entities/user-agent-detail.ts';
import { Type } from 'typebox';
import type { IssueRow } from '../../../db/tables/issues.ts';
import { createIssue, ISSUE_TYPES } from '../../../domain/issues/create-issue.ts';
import { updateIssue } from '../../../domain/issues/update-issue.ts';
import { deleteIssue } from '../../../domain/issues/delete-issue.ts';
import { labelTitles } from '../../../domain/issues/issue-labels.ts';
import { canUpdateIssue } from '../../../domain/issues/issue.policy.ts';
import { findIssueById } from '../../../domain/issues/issues.queries.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { IssueSchema, presentIssues, type ReferenceContext } from '../../entities/issue.ts';
import { contextProjectPath, issueProjectPaths, loadIssue } from '../../loaders/issues.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { conflict, forbidden, invalidParams, notFound, validationFailed } from '../../errors.ts';
import { coerceDate } from '../../input/dates.ts';
import { defineParams, P } from '../../input/params.ts';
import { route } from '../../route.ts';

const labelsParam = (description: string) => P.optional(P.array(P.name(), { commaSeparated: true, description }));
const assigneeIds = P.optional(P.array(P.integer({ minimum: 0 }), {
  commaSeparated: true, description: 'one user id (Free tier); [] or 0 clears',
}));

const createParams = defineParams({
  id: P.string(),
  title: P.name(),
  description: P.optional(P.string({ description: 'at most 1,048,576 characters' })),
  labels: labelsParam('comma-separated label titles; missing ones are created'),
  assignee_ids: assigneeIds,
  assignee_id: P.optional(P.integer({ minimum: 0, description: 'deprecated: assignee_ids' })),
  milestone_id: P.optional(P.integer({ minimum: 0 })),
  due_date: P.optional(P.date()),
  confidential: P.optional(P.boolean()),
  issue_type: P.optional(P.oneOf(ISSUE_TYPES)),
  created_at: P.optional(P.dateTime({ description: 'administrators and project owners only' })),
  iid: P.optional(P.integer({ minimum: 1, description: 'administrators and project owners only' })),
  weight: P.optional(P.integer({ minimum: 0, description: 'ignored: issue weights are a licensed feature' })),
});

const updateParams = defineParams({
  id: P.string(),
  issue_iid: P.integer(),
  title: P.optional(P.name()),
  description: P.optional(P.string()),
  labels: labelsParam('replaces the labels'),
  add_labels: labelsParam('labels to add'),
  remove_labels: labelsParam('labels to remove'),
  assignee_ids: assigneeIds,
  assignee_id: P.optional(P.integer({ minimum: 0 })),
  milestone_id: P.optional(P.integer({ minimum: 0, description: '0 removes the milestone' })),
  state_event: P.optional(P.oneOf(['close', 'reopen'] as const)),
  updated_at: P.optional(P.dateTime({ description: 'administrators and project owners only' })),
  due_date: P.optional(P.string({ maxLength: 128, description: 'YYYY-MM-DD; empty removes it' })),
  confidential: P.optional(P.boolean()),
  discussion_locked: P.optional(P.boolean()),
  issue_type: P.optional(P.oneOf(ISSUE_TYPES)),
  weight: P.optional(P.integer({ minimum: 0 })),
}, {
  atLeastOneOf: [[
    'title', 'description', 'labels', 'add_labels', 'remove_labels', 'assignee_ids', 'assignee_id', 'milestone_id', 'state_event',
    'updated_at', 'due_date', 'confidential', 'discussion_locked', 'issue_type', 'weight',
  ]],
});

const oneParams = defineParams({ id: P.string(), issue_iid: P.integer() });
const globalParams = defineParams({ id: P.integer() });

/** Issue validates its title's presence (a blank one is the model's error, 400). */
function checkTitle(title: string | undefined): void {
  if (title !== undefined && title.trim() === '') throw validationFailed({ title: ["can't be blank"] });
}

/** The legacy `assignee_id` stands for `assignee_ids` when those are not given (convert_parameters_from_legacy_format). */
const assigneesOf = (input: { assignee_ids?: number[]; assignee_id?: number }) =>
  input.assignee_ids ?? (input.assignee_id !== undefined ? [input.assignee_id] : undefined);

const issues: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function presentOne(
    request: FastifyRequest, issue: IssueRow, projects: Awaited<ReturnType<typeof issueProjectPaths>>, from: ReferenceContext,
  ) {
    const [one] = await presentIssues(db, [issue], {
      externalUrl: config.externalUrl, projects, viewerId: request.caller?.user.id ?? null, from, includeSubscribed: true,
    });
    return one;
  }

  route(app, {
    method: 'POST', url: '/projects/:id/issues', auth: 'required', params: createParams,
    schema: { summary: 'Open an issue', tags: ['issues'], response: { 201: IssueSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'create_issue');
    checkTitle(input.title);
    const result = await createIssue(db, {
      where: { project: ctx.project, lineage: ctx.lineage }, author: caller.user, actor: ctx.actor,
      params: {
        title: input.title, description: input.description, confidential: input.confidential, issueType: input.issue_type,
        dueDate: input.due_date, milestoneId: input.milestone_id, labels: input.labels ? labelTitles(input.labels) : undefined,
        // A blank iid or created_at is Grape's nil: not given (the fuzzer's `iid=` once reached the NOT NULL column).
        assigneeIds: assigneesOf(input), iid: input.iid ?? undefined, createdAt: input.created_at ?? undefined,
      },
      origin: requestOrigin(request),
    });
    if (!result.ok) throw conflict('Duplicated issue');
    reply.code(201);
    return presentOne(request, result.value, contextProjectPath(ctx), { project: ctx.project.id });
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid', auth: 'optional', params: oneParams,
    schema: { summary: 'One issue of a project', tags: ['issues'], response: { 200: IssueSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    return presentOne(request, issue, contextProjectPath(ctx), { project: ctx.project.id });
  });

  route(app, {
    method: 'GET', url: '/issues/:id', auth: 'required', params: globalParams,
    schema: { summary: 'Any issue by its global id (administrators)', tags: ['issues'], response: { 200: IssueSchema } },
  }, async ({ request, input, caller }) => {
    // `authenticated_as_admin!`.
    if (!caller.user.admin) throw forbidden();
    const issue = isStorableId(input.id) ? await findIssueById(db, input.id) : undefined;
    if (!issue) throw notFound('Issue');
    return presentOne(request, issue, await issueProjectPaths(db, [issue.project_id]), { project: issue.project_id });
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/issues/:issue_iid', auth: 'required', params: updateParams,
    schema: { summary: 'Change, close or reopen an issue', tags: ['issues'], response: { 200: IssueSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const { issue, subject } = await loadIssue(request, ctx, input.issue_iid);
    if (!canUpdateIssue(ctx.actor, ctx.project, subject)) throw forbidden();
    checkTitle(input.title);
    let dueDate: string | null | undefined;
    if (input.due_date !== undefined) {
      dueDate = input.due_date.trim() === '' ? null : coerceDate(input.due_date);
      if (dueDate === null && input.due_date.trim() !== '') throw invalidParams(['due_date is invalid']);
    }
    const updated = await updateIssue(db, {
      where: { project: ctx.project, lineage: ctx.lineage }, issue, user: caller.user, actor: ctx.actor,
      params: {
        title: input.title, description: input.description,
        labels: input.labels ? labelTitles(input.labels) : undefined,
        addLabels: input.add_labels ? labelTitles(input.add_labels) : undefined,
        removeLabels: input.remove_labels ? labelTitles(input.remove_labels) : undefined,
        assigneeIds: assigneesOf(input), milestoneId: input.milestone_id, stateEvent: input.state_event, updatedAt: input.updated_at,
        dueDate, confidential: input.confidential, discussionLocked: input.discussion_locked, issueType: input.issue_type,
      },
    });
    return presentOne(request, updated, contextProjectPath(ctx), { project: ctx.project.id });
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/issues/:issue_iid', auth: 'required', params: oneParams,
    schema: { summary: 'Remove an issue (owners and administrators)', tags: ['issues'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    authorizeProject(ctx, 'destroy_issue');
    await deleteIssue(db, issue.id);
    return reply.code(204).send();
  });
};

export default issues;
