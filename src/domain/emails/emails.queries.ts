/** Every Kysely call of the emails area (users' secondary emails). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { EmailRow } from '../../db/tables/emails.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A user's secondary emails in id order (index emails_user). */
export function userEmailsQuery(db: Db, userId: number) {
  return db.selectFrom('emails').selectAll().where('user_id', '=', userId).orderBy('id');
}

export async function findUserEmail(db: Db, userId: number, emailId: number): Promise<EmailRow | undefined> {
  if (!isStorableId(emailId)) return undefined;
  return db.selectFrom('emails').selectAll().where('user_id', '=', userId).where('id', '=', emailId).executeTakeFirst();
}

/**
 * Whether an address is anyone's primary or secondary email, ignoring case (reference §11; the
 * lower() indexes users_email_lower and emails_email_lower). The users area checks the same.
 */
export async function emailTaken(db: Db, email: string): Promise<boolean> {
  const lower = email.toLowerCase();
  const row = await db.selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('users').select('id').where(sql`lower(email)`, '=', lower)).as('primary'),
    eb.exists(eb.selectFrom('emails').select('id').where(sql`lower(email)`, '=', lower)).as('secondary'),
  ]).executeTakeFirstOrThrow();
  return Boolean(Number(row.primary)) || Boolean(Number(row.secondary));
}

export function insertEmail(db: Db, e: { userId: number; email: string; confirmedAt: string | null }): Promise<EmailRow> {
  const now = nowIso();
  return db.insertInto('emails').values({
    user_id: e.userId, email: e.email, confirmed_at: e.confirmedAt, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteEmail(db: Db, id: number): Promise<void> {
  await db.deleteFrom('emails').where('id', '=', id).execute();
}
