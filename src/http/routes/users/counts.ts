/**
 * GET /user_counts (spec: User counts; lib/api/user_counts.rb): the current user's open assigned
 * issues and merge requests, review requests and pending to-dos.
 */
import type { FastifyPluginAsync } from 'fastify';
import { UserCountsSchema, type UserCounts } from '../../entities/user-counts.ts';
import { route } from '../../route.ts';

/**
 * kiln serves no issues, merge requests or to-do items, so every source of these counts has no
 * rows and each count is truly 0. When those resources arrive, their counts replace these.
 */
function countsFor(): UserCounts {
  const assignedMergeRequests = 0;
  return {
    merge_requests: assignedMergeRequests,
    assigned_issues: 0,
    assigned_merge_requests: assignedMergeRequests,
    review_requested_merge_requests: 0,
    todos: 0,
  };
}

const userCounts: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/user_counts', auth: 'required',
    // The Service adds no read_user scope here: api or read_api.
    schema: { summary: "The current user's counts", tags: ['users'], response: { 200: UserCountsSchema } },
  }, async (_context) => countsFor());
};

export default userCounts;
