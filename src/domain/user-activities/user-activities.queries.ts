/** The Kysely call of the user activities list (GET /user/activities). */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

/**
 * Users whose last activity is on or after `fromDate` (YYYY-MM-DD), oldest first, id breaking
 * ties so pages are stable (served by users_last_activity_on_id).
 */
export function activitiesQuery(db: Kysely<DB>, fromDate: string) {
  return db.selectFrom('users')
    .select(['id', 'username', 'last_activity_on'])
    .where('last_activity_on', '>=', fromDate)
    .orderBy('last_activity_on', 'asc')
    .orderBy('id', 'asc');
}
