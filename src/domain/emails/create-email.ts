/**
 * Adding a secondary email (the Service's Email model, reference §2.3): present, of Devise's
 * email format, and nobody's primary or secondary email yet, ignoring case. `skip_confirmation`
 * (administrators) adds it confirmed; otherwise it stays unconfirmed.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { EmailRow } from '../../db/tables/emails.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { emailTaken, insertEmail } from './emails.queries.ts';

/** Devise.email_regexp. */
const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;
const TAKEN = 'has already been taken';

export type CreateEmailResult = { ok: true; value: EmailRow } | { ok: false; errors: Record<string, string[]> };

export async function createEmail(
  db: Kysely<DB>, input: { userId: number; email: string; skipConfirmation: boolean },
): Promise<CreateEmailResult> {
  const email = input.email.trim();
  const errors = new ValidationErrors();
  if (email === '') errors.add('email', "can't be blank");
  if (!EMAIL_FORMAT.test(email)) errors.add('email', 'is invalid');
  else if (await emailTaken(db, email)) errors.add('email', TAKEN);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  try {
    const row = await insertEmail(db, { userId: input.userId, email, confirmedAt: input.skipConfirmation ? nowIso() : null });
    return { ok: true, value: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, errors: { email: [TAKEN] } };
    throw err;
  }
}
