/**
 * Setting the current user's status, as the Service's Users::SetStatusService does
 * (reference §1.9; spec, Users table row PUT /user/status):
 * - emoji and message both blank deletes the status, whatever availability says (spec, Users
 *   table row PUT /user/status: "Both emoji and message empty clears the status");
 * - a status without an emoji gets `speech_balloon`;
 * - a blank availability leaves the stored one (or `not_set`) in place;
 * - `clear_status_after` sets clear_status_at that far from now; without it there is none.
 * PUT replaces (parameters not sent are null); PATCH changes only what was sent, on top of the
 * current, unexpired status.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserStatusRow } from '../../db/tables/user-status.ts';
import { emojiExists } from './emoji.ts';
import { deleteStatus, findCurrentStatus, upsertStatus } from './user-status.queries.ts';

export const DEFAULT_EMOJI = 'speech_balloon';
export const AVAILABILITIES = ['not_set', 'busy'] as const;
export const MESSAGE_MAX_LENGTH = 100;

/** UserStatus::CLEAR_STATUS_QUICK_OPTIONS, in seconds. */
export const CLEAR_STATUS_AFTER = {
  '30_minutes': 30 * 60,
  '3_hours': 3 * 3600,
  '8_hours': 8 * 3600,
  '1_day': 86_400,
  '3_days': 3 * 86_400,
  '7_days': 7 * 86_400,
  '30_days': 30 * 86_400,
} as const;
export type ClearStatusAfter = keyof typeof CLEAR_STATUS_AFTER;
export const CLEAR_STATUS_AFTER_VALUES = Object.keys(CLEAR_STATUS_AFTER) as ClearStatusAfter[];

export interface StatusParams {
  emoji?: string | null;
  message?: string | null;
  availability?: string | null;
  clear_status_after?: ClearStatusAfter | null;
}

export type SetStatusResult =
  | { ok: true; value: UserStatusRow | null }
  | { ok: false; reason: 'invalid_availability' }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> };

/** Rails' `blank?`: nil, empty or only whitespace. */
const isBlank = (s: string | null | undefined): s is null | undefined | '' => s === null || s === undefined || s.trim() === '';

/** The parameters the request stands for: everything for PUT, the current status overlaid for PATCH. */
function effectiveParams(sent: StatusParams, current: UserStatusRow | undefined, mode: 'replace' | 'update') {
  if (mode === 'replace') {
    return { emoji: sent.emoji ?? null, message: sent.message ?? null, availability: sent.availability ?? null, clearAt: undefined };
  }
  const has = (k: keyof StatusParams) => Object.hasOwn(sent, k);
  return {
    emoji: has('emoji') ? sent.emoji ?? null : current?.emoji ?? null,
    message: has('message') ? sent.message ?? null : current?.message ?? null,
    // A stored `not_set` is the absence of an availability, so it alone does not keep a status alive.
    availability: has('availability') ? sent.availability ?? null : current?.availability === 'busy' ? 'busy' : null,
    clearAt: has('clear_status_after') ? undefined : current?.clear_status_at ?? null,
  };
}

export async function setStatus(
  db: Kysely<DB>,
  userId: number,
  sent: StatusParams,
  mode: 'replace' | 'update',
  now: Date = new Date(),
): Promise<SetStatusResult> {
  if (!isBlank(sent.availability) && !(AVAILABILITIES as readonly string[]).includes(sent.availability!)) {
    return { ok: false, reason: 'invalid_availability' };
  }
  const nowIso = now.toISOString();
  const current = await findCurrentStatus(db, userId, nowIso);
  const p = effectiveParams(sent, current, mode);
  if (isBlank(p.emoji) && isBlank(p.message)) {
    await deleteStatus(db, userId);
    return { ok: true, value: null };
  }
  const emoji = isBlank(p.emoji) ? DEFAULT_EMOJI : p.emoji;
  const errors: Record<string, string[]> = {};
  if (!emojiExists(emoji)) errors.emoji = ['is not included in the list'];
  // Ruby counts characters, not UTF-16 units.
  if (p.message && [...p.message].length > MESSAGE_MAX_LENGTH) {
    errors.message = [`is too long (maximum is ${MESSAGE_MAX_LENGTH} characters)`];
  }
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };

  const after = sent.clear_status_after;
  const clearStatusAt = p.clearAt !== undefined ? p.clearAt
    : after ? new Date(now.getTime() + CLEAR_STATUS_AFTER[after] * 1000).toISOString() : null;
  const row = await upsertStatus(db, userId, {
    emoji,
    message: p.message,
    availability: isBlank(p.availability) ? current?.availability ?? 'not_set' : p.availability,
    clear_status_at: clearStatusAt,
  }, nowIso);
  return { ok: true, value: row };
}
