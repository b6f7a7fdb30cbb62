/**
 * Broadcast messages (the Service's app/models/broadcast_message.rb): validation of a created or
 * updated message and its computed `active` state.
 */
import type { BroadcastMessageRow, BroadcastType } from '../../db/tables/instance-administration.ts';
import { isoMillis, nowIso } from '../clock.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { findBroadcastMessage, insertBroadcastMessage, updateBroadcastMessage } from './broadcast-messages.queries.ts';

export const BROADCAST_TYPES = ['banner', 'notification'] as const satisfies readonly BroadcastType[];
/** BroadcastMessage::ALLOWED_TARGET_ACCESS_LEVELS: Guest … Owner. */
export const ALLOWED_TARGET_ACCESS_LEVELS = [10, 20, 30, 40, 50] as const;
/** default_value_for :color / :font. */
const DEFAULT_COLOR = '#E75E40';
const DEFAULT_FONT = '#FFFFFF';
/** ColorValidator: `#` and three or six hexadecimal digits. */
const COLOR = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;

export interface BroadcastMessageInput {
  message?: string;
  startsAt?: string;
  endsAt?: string;
  color?: string;
  font?: string;
  targetAccessLevels?: number[];
  targetPath?: string;
  broadcastType?: BroadcastType;
  dismissable?: boolean;
}

export type BroadcastResult = { ok: true; message: BroadcastMessageRow } | { ok: false; errors: Record<string, string[]> };

/** started? && !ended? */
export function broadcastMessageActive(row: BroadcastMessageRow, now = Date.now()): boolean {
  return now >= isoMillis(row.starts_at) && !(isoMillis(row.ends_at) < now);
}

function validate(m: {
  message: string | null; starts_at: string | null; ends_at: string | null; color: string | null; font: string | null;
}): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  // `validates :message, :starts_at, :ends_at, presence: true` (an empty date arrives as null).
  if (!m.message || m.message.trim() === '') errors.message = ["can't be blank"];
  if (!m.starts_at) errors.starts_at = ["can't be blank"];
  if (!m.ends_at) errors.ends_at = ["can't be blank"];
  // `allow_blank: true, color: true`
  if (m.color && !COLOR.test(m.color)) errors.color = ['must be a valid color code'];
  if (m.font && !COLOR.test(m.font)) errors.font = ['must be a valid color code'];
  return errors;
}

export async function createBroadcastMessage(db: Kysely<DB>, input: BroadcastMessageInput & { message: string }): Promise<BroadcastResult> {
  const now = new Date();
  const row = {
    message: input.message,
    // The route's defaults: now and an hour from now.
    starts_at: input.startsAt ?? nowIso(now),
    ends_at: input.endsAt ?? nowIso(new Date(now.getTime() + 3_600_000)),
    color: input.color ?? DEFAULT_COLOR,
    font: input.font ?? DEFAULT_FONT,
    target_access_levels: (input.targetAccessLevels ?? []).join(' '),
    target_path: input.targetPath ?? null,
    broadcast_type: input.broadcastType ?? 'banner',
    dismissable: input.dismissable === undefined ? null : input.dismissable ? 1 : 0,
    created_at: nowIso(now), updated_at: nowIso(now),
  };
  const errors = validate(row);
  if (Object.keys(errors).length) return { ok: false, errors };
  return { ok: true, message: await insertBroadcastMessage(db, row) };
}

export async function changeBroadcastMessage(
  db: Kysely<DB>, existing: BroadcastMessageRow, input: BroadcastMessageInput,
): Promise<BroadcastResult> {
  const set = {
    ...(input.message !== undefined ? { message: input.message } : {}),
    ...(input.startsAt !== undefined ? { starts_at: input.startsAt } : {}),
    ...(input.endsAt !== undefined ? { ends_at: input.endsAt } : {}),
    ...(input.color !== undefined ? { color: input.color } : {}),
    ...(input.font !== undefined ? { font: input.font } : {}),
    // An emptied list arrives as null (the parameter layer's empty value): no target levels, as on create.
    ...(input.targetAccessLevels !== undefined ? { target_access_levels: (input.targetAccessLevels ?? []).join(' ') } : {}),
    ...(input.targetPath !== undefined ? { target_path: input.targetPath } : {}),
    ...(input.broadcastType !== undefined ? { broadcast_type: input.broadcastType } : {}),
    ...(input.dismissable !== undefined ? { dismissable: input.dismissable ? 1 : 0 } : {}),
  };
  const errors = validate({ ...existing, ...set });
  if (Object.keys(errors).length) return { ok: false, errors };
  // Validated above: none of the required columns is null here.
  const checked = set as typeof set & { message?: string; starts_at?: string; ends_at?: string };
  return { ok: true, message: await updateBroadcastMessage(db, existing.id, { ...checked, updated_at: nowIso() }) };
}

export { findBroadcastMessage };
