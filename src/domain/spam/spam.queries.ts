/** Every Kysely call of the spam area. Small functions taking (db | trx, …). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { SpamLogRow } from '../../db/tables/user-status.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface NewSpamLog {
  userId: number;
  title: string | null;
  description: string | null;
  sourceIp: string | null;
  userAgent: string | null;
  noteableType: string;
}

export function insertSpamLog(db: Db, log: NewSpamLog): Promise<SpamLogRow> {
  const now = nowIso();
  return db.insertInto('spam_logs').values({
    user_id: log.userId, title: log.title, description: log.description, source_ip: log.sourceIp,
    user_agent: log.userAgent, noteable_type: log.noteableType, via_api: 1, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** A spam log of this user still waiting for its CAPTCHA (each may be solved once). */
export function findPendingSpamLog(db: Db, id: number, userId: number): Promise<SpamLogRow | undefined> {
  return db.selectFrom('spam_logs').selectAll()
    .where('id', '=', id).where('user_id', '=', userId).where('recaptcha_verified', '=', 0)
    .executeTakeFirst();
}

/** Marks the log solved; false when another request solved it first. */
export async function markRecaptchaVerified(db: Db, id: number, userId: number): Promise<boolean> {
  const result = await db.updateTable('spam_logs').set({ recaptcha_verified: 1, updated_at: nowIso() })
    .where('id', '=', id).where('user_id', '=', userId).where('recaptcha_verified', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
