/** Email (reference §2.3): a user's secondary email and when it was confirmed. */
import { Type, type Static } from 'typebox';
import type { EmailRow } from '../../db/tables/emails.ts';

export const EmailSchema = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  confirmed_at: Type.Union([Type.String(), Type.Null()]),
}, { title: 'Email' });

export type Email = Static<typeof EmailSchema>;

export function presentEmail(row: EmailRow): Email {
  return { id: row.id, email: row.email, confirmed_at: row.confirmed_at };
}
