/** UserPreferences (spec: User preferences): id, user_id and the two diff flags. */
import { Type, type Static } from 'typebox';
import type { UserPreferencesRow } from '../../db/tables/user-status.ts';

export const UserPreferencesSchema = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  view_diffs_file_by_file: Type.Boolean(),
  show_whitespace_in_diffs: Type.Boolean(),
}, { title: 'UserPreferences' });

export type UserPreferences = Static<typeof UserPreferencesSchema>;

export function presentUserPreferences(row: UserPreferencesRow): UserPreferences {
  return {
    id: row.id,
    user_id: row.user_id,
    view_diffs_file_by_file: row.view_diffs_file_by_file === 1,
    show_whitespace_in_diffs: row.show_whitespace_in_diffs === 1,
  };
}
