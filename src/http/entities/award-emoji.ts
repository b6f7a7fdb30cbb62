/** AwardEmoji as the Service 15.2 presents it (lib/api/entities/award_emoji.rb), its users read in one query. */
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { AwardEmojiRow } from '../../domain/award-emoji/award-emoji.queries.ts';
import { findUsersByIds } from '../../domain/users/users-batch.queries.ts';
import { presentUserBasic, UserBasicSchema } from './user.ts';

export const AwardEmojiSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  user: UserBasicSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  awardable_id: Type.Integer(),
  awardable_type: Type.String(),
}, { title: 'AwardEmoji' });
export type AwardEmoji = Static<typeof AwardEmojiSchema>;

export async function presentAwards(db: Kysely<DB>, rows: readonly AwardEmojiRow[], externalUrl: string): Promise<AwardEmoji[]> {
  const users = new Map((await findUsersByIds(db, [...new Set(rows.map((r) => r.user_id))])).map((u) => [u.id, u]));
  const opts = { externalUrl, canReadProfile: false };
  return rows.map((r) => ({
    id: r.id, name: r.name, user: presentUserBasic(users.get(r.user_id)!, {}, opts), created_at: r.created_at,
    updated_at: r.updated_at, awardable_id: r.awardable_id, awardable_type: r.awardable_type,
  }));
}
