/**
 * An issue's time tracking (lib/api/time_tracking_endpoints.rb of the Service 15.2;
 * doc/api/issues.md "Set a time estimate" … "Get time tracking stats"): estimating and logging
 * time take admin_issue (Reporter and up), reading the stats takes reading the issue. Durations
 * are the Service's human format ("3h30m", "1w 2d"; a bare number is hours). A duration it cannot
 * read is refused as the model refuses it (render_validation_error!, 400).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { IssueRow } from '../../../db/tables/issues.ts';
import { findIssueById } from '../../../domain/issues/issues.queries.ts';
import { MAX_DURATION_TEXT, formatDuration, parseDuration } from '../../../domain/issues/time-tracking.ts';
import {
  addTimeSpent, MAX_TIMELOG_SUMMARY, resetTimeSpent, setTimeEstimate, totalTimeSpent,
} from '../../../domain/issues/time-tracking.queries.ts';
import { validationFailed } from '../../errors.ts';
import { defineParams, INT32_MAX, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { loadIssue } from '../../loaders/issues.ts';
import { TimeStatsSchema } from '../../entities/issue.ts';
import { route } from '../../route.ts';

const id = P.string({ description: 'ID or URL-encoded full path of the project' });
const issueParams = defineParams({ id, issue_iid: P.integer() });
const duration = P.string({ maxLength: MAX_DURATION_TEXT, description: 'e.g. 3h30m' });
const estimateParams = defineParams({ id, issue_iid: P.integer(), duration });
const spendParams = defineParams({
  id, issue_iid: P.integer(), duration, summary: P.optional(P.string({ maxLength: MAX_TIMELOG_SUMMARY })),
});

/** Seconds a duration text stands for when an integer column can hold it; null otherwise. */
function seconds(text: string): number | null {
  const n = parseDuration(text);
  return n === null || Math.abs(n) > INT32_MAX ? null : n;
}

const timeTracking: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function stats(issueId: number) {
    const issue = (await findIssueById(db, issueId))!;
    const total = await totalTimeSpent(db, issueId);
    return {
      time_estimate: issue.time_estimate, total_time_spent: total,
      human_time_estimate: formatDuration(issue.time_estimate), human_total_time_spent: formatDuration(total),
    };
  }

  /** The issue, for a caller who may administer it (time tracking is admin_issue: `authorize! :admin_issue`). */
  async function adminIssue(request: FastifyRequest, input: { id: string; issue_iid: number }): Promise<IssueRow> {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    authorizeProject(ctx, 'admin_issue');
    return issue;
  }

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/time_estimate', auth: 'required', params: estimateParams,
    schema: { summary: "Set an issue's time estimate", tags: ['issues'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const issue = await adminIssue(request, input);
    const n = seconds(input.duration);
    // Issuable validates the estimate as a number (nil from an unreadable text) that is not negative.
    if (n === null || n < 0) throw validationFailed({ time_estimate: ['has an invalid format'] });
    await setTimeEstimate(db, issue, caller.user.id, n);
    return stats(issue.id);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/reset_time_estimate', auth: 'required', params: issueParams,
    schema: { summary: "Reset an issue's time estimate", tags: ['issues'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const issue = await adminIssue(request, input);
    await setTimeEstimate(db, issue, caller.user.id, 0);
    return stats(issue.id);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/add_spent_time', auth: 'required', params: spendParams,
    schema: { summary: 'Log time spent on an issue', tags: ['issues'], response: { 201: TimeStatsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const issue = await adminIssue(request, input);
    const n = seconds(input.duration);
    // An unreadable duration is nil, and the time log made of it fails its presence validation.
    if (n === null) throw validationFailed({ 'timelogs.time_spent': ["can't be blank"] });
    const result = await addTimeSpent(db, issue, caller.user.id, n, input.summary ?? null);
    if (!result.ok) throw validationFailed({ base: ['Time to subtract exceeds the total time spent'] });
    reply.code(201);
    return stats(issue.id);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/reset_spent_time', auth: 'required', params: issueParams,
    schema: { summary: "Reset an issue's time spent", tags: ['issues'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input, caller }) => {
    const issue = await adminIssue(request, input);
    await resetTimeSpent(db, issue, caller.user.id);
    return stats(issue.id);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/time_stats', auth: 'optional', params: issueParams,
    schema: { summary: "An issue's time tracking stats", tags: ['issues'], response: { 200: TimeStatsSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    return stats(issue.id);
  });
};

export default timeTracking;
