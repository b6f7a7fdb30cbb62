/**
 * Merge requests (issue 30): opening, reading, listing, changing and merging them on the
 * project's real repository, with their diffs, versions, approvals and the collaboration core's
 * notes, labels, milestones, events and todos.
 *
 * Every path of the area and its guard: `npm run routes -- merge-requests`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import mergeRequests from './merge-requests.ts';
import mergeRequestLists from './merge-request-lists.ts';
import mergeRequestChanges from './merge-request-changes.ts';
import mergeRequestActions from './merge-request-actions.ts';

export default async function mergeRequestsArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'merge-requests', {
    'merge-requests': mergeRequests,          // /projects/:id/merge_requests[/:merge_request_iid]
    'merge-request-lists': mergeRequestLists, // /projects/:id/merge_requests, /groups/:id/merge_requests, /merge_requests
    // …/:merge_request_iid/{commits,changes,diffs,versions[/:version_id],pipelines,participants,closes_issues}
    'merge-request-changes': mergeRequestChanges,
    // …/:merge_request_iid/{merge,merge_ref,cancel_merge_when_pipeline_succeeds,rebase,approve,unapprove,approvals,reset_approvals,
    // subscribe,unsubscribe,time_estimate,reset_time_estimate,add_spent_time,reset_spent_time,time_stats}
    'merge-request-actions': mergeRequestActions,
  });
}
