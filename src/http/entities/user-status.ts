/**
 * UserStatus (spec: User status; reference §1.3): emoji, message, availability, message_html,
 * clear_status_at. Without a status every field is null (`present status || {}`, reference §11).
 */
import { Type, type Static } from 'typebox';
import type { UserStatusRow } from '../../db/tables/user-status.ts';
import { renderEmojiHtml } from '../../domain/user-status/emoji.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const UserStatusSchema = Type.Object({
  emoji: NString,
  message: NString,
  availability: NString,
  message_html: NString,
  clear_status_at: NString,
}, { title: 'UserStatus' });

export type UserStatus = Static<typeof UserStatusSchema>;

export function presentUserStatus(row: UserStatusRow | null | undefined): UserStatus {
  if (!row) return { emoji: null, message: null, availability: null, message_html: null, clear_status_at: null };
  return {
    emoji: row.emoji,
    message: row.message,
    availability: row.availability,
    // The Service renders nothing for a blank message.
    message_html: row.message && row.message.trim() !== '' ? renderEmojiHtml(row.message) : null,
    clear_status_at: row.clear_status_at,
  };
}
