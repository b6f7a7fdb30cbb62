/** Tables of the status, preferences and spam area (migration 2026-11-22T1020_status_preferences). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface UserStatusesTable {
  user_id: number;
  emoji: Generated<string>;
  message: string | null;
  /** `not_set` | `busy` (reference §1.3 UserStatus). */
  availability: Generated<string>;
  /** When the status stops counting; null for a status without an interval. */
  clear_status_at: string | null;
  created_at: string;
  updated_at: string;
}
export type UserStatusRow = Selectable<UserStatusesTable>;

export interface UserPreferencesTable {
  id: Generated<number>;
  user_id: number;
  view_diffs_file_by_file: Generated<Flag>;
  show_whitespace_in_diffs: Generated<Flag>;
  created_at: string;
  updated_at: string;
}
export type UserPreferencesRow = Selectable<UserPreferencesTable>;

export interface SpamLogsTable {
  id: Generated<number>;
  user_id: number;
  title: string | null;
  description: string | null;
  source_ip: string | null;
  user_agent: string | null;
  /** What was judged, e.g. `UserStatus`, `PersonalSnippet`. */
  noteable_type: string;
  via_api: Generated<Flag>;
  recaptcha_verified: Generated<Flag>;
  submitted_as_ham: Generated<Flag>;
  created_at: string;
  updated_at: string;
}
export type SpamLogRow = Selectable<SpamLogsTable>;

declare module '../types.ts' {
  interface DB {
    user_statuses: UserStatusesTable;
    user_preferences: UserPreferencesTable;
    spam_logs: SpamLogsTable;
  }
}
