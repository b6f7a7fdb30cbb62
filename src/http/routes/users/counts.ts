/**
 * GET /user_counts (spec: User counts; lib/api/user_counts.rb): the current user's open assigned
 * issues and merge requests, review requests and pending to-dos.
 */
import type { FastifyPluginAsync } from 'fastify';
import { UserCountsSchema, type UserCounts } from '../../entities/user-counts.ts';
import { route } from '../../route.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.ts';
import { openMergeRequestCountsOf } from '../../../domain/merge-requests/merge-requests.queries.ts';

/**
 * The merge request counts are the user's open requests assigned and asking their review; the
 * issue and to-do counts stay 0 here until those areas fill them (their routes are elsewhere).
 */
async function countsFor(db: Kysely<DB>, userId: number): Promise<UserCounts> {
  const mrs = await openMergeRequestCountsOf(db, userId);
  return {
    merge_requests: mrs.assigned,
    assigned_issues: 0,
    assigned_merge_requests: mrs.assigned,
    review_requested_merge_requests: mrs.reviews,
    todos: 0,
  };
}

const userCounts: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/user_counts', auth: 'required',
    // The Service adds no read_user scope here: api or read_api.
    schema: { summary: "The current user's counts", tags: ['users'], response: { 200: UserCountsSchema } },
  }, async ({ caller }) => countsFor(app.kiln.db, caller.user.id));
};

export default userCounts;
