/**
 * Giving an emoji (AwardEmojis::AddService of the Service 15.2): the name must be one of the
 * emoji the Service knows, an alias standing for its emoji's name (`+1` is recorded as
 * `thumbsup`, AwardEmoji#normalize_name); the model's errors come back as its full messages.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { findEmoji } from '../user-status/emoji.ts';
import { insertAward, type AwardableRef, type AwardEmojiRow } from './award-emoji.queries.ts';

export type AwardResult = { ok: true; value: AwardEmojiRow } | { ok: false; message: string };

/** The emoji's name a given name stands for, or null when it names no emoji. */
export function normalizeEmojiName(name: string): string | null {
  return findEmoji(name)?.name ?? null;
}

export async function awardEmoji(db: Kysely<DB>, a: AwardableRef, userId: number, name: string): Promise<AwardResult> {
  const normalized = normalizeEmojiName(name);
  // AwardEmoji validates `name` present and a known emoji (Gitlab::EmojiNameValidator).
  if (name === '') return { ok: false, message: "Name can't be blank" };
  if (normalized === null) return { ok: false, message: 'Name is not a valid emoji name' };
  const award = await insertAward(db, a, userId, normalized);
  if (award === 'taken') return { ok: false, message: 'Name has already been taken' };
  return { ok: true, value: award };
}
