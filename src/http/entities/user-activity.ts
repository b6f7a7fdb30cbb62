/**
 * UserActivity (spec: User activity; reference §1.3): username, last_activity_on, and
 * last_activity_at, the deprecated alias carrying the same YYYY-MM-DD date.
 */
import { Type, type Static } from 'typebox';

export const UserActivitySchema = Type.Object({
  username: Type.String(),
  last_activity_on: Type.Union([Type.String(), Type.Null()]),
  last_activity_at: Type.Union([Type.String(), Type.Null()]),
}, { title: 'UserActivity' });

export type UserActivity = Static<typeof UserActivitySchema>;

export function presentUserActivity(row: { username: string; last_activity_on: string | null }): UserActivity {
  return { username: row.username, last_activity_on: row.last_activity_on, last_activity_at: row.last_activity_on };
}
