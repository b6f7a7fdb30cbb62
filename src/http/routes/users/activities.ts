/**
 * GET /user/activities (spec: Users table; reference §1.9): administrators list users active on
 * or after `from` (default six months ago), oldest activity first.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { activitiesQuery } from '../../../domain/user-activities/user-activities.queries.ts';
import { forbidden } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { presentUserActivity, UserActivitySchema } from '../../entities/user-activity.ts';
import { route } from '../../route.ts';

const activitiesParams = defineParams({
  from: P.optional(P.dateTime({ description: 'YYYY-MM-DD; users active on or after this date (default six months ago)' })),
  ...paginationParams,
});

/** Six calendar months before `now`, as Rails' `6.months.ago`. */
export function sixMonthsAgo(now: Date = new Date()): Date {
  const d = new Date(now);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - 6);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

const userActivities: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/user/activities', auth: 'required', scopes: ['read_user'], params: activitiesParams,
    schema: { summary: 'Users active since a date (administrators)', tags: ['users'], response: { 200: Type.Array(UserActivitySchema) } },
  }, async ({ request, reply, input, caller }) => {
    if (caller.user.admin !== 1) throw forbidden();
    const from = typeof input.from === 'string' ? new Date(input.from) : sixMonthsAgo();
    // last_activity_on is a date: compare with the UTC date of `from`.
    const rows = await paginate(db, request, reply, activitiesQuery(db, from.toISOString().slice(0, 10)));
    return rows.map(presentUserActivity);
  });
};

export default userActivities;
