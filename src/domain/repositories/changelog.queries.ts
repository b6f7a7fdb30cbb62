/** The users a changelog names: commit author emails to usernames (the Service's User.find_by_any_email). */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

/**
 * Lower-cased email → username of an active user whose primary or confirmed secondary address it
 * is (both looked up by their `lower(email)` unique indexes).
 */
export async function usernamesByEmail(db: Kysely<DB>, emails: string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(emails.map((e) => e.toLowerCase()))].filter((e) => e.length > 0 && e.length <= 255);
  const out = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += 500) {
    const chunk = wanted.slice(i, i + 500);
    const primary = await db.selectFrom('users')
      .select([sql<string>`lower(email)`.as('address'), 'username'])
      .where(sql<string>`lower(email)`, 'in', chunk).where('state', '=', 'active')
      .execute();
    const secondary = await db.selectFrom('emails')
      .innerJoin('users', 'users.id', 'emails.user_id')
      .select([sql<string>`lower(emails.email)`.as('address'), 'users.username as username'])
      .where(sql<string>`lower(emails.email)`, 'in', chunk).where('emails.confirmed_at', 'is not', null).where('users.state', '=', 'active')
      .execute();
    for (const r of [...secondary, ...primary]) out.set(r.address, r.username);
  }
  return out;
}
