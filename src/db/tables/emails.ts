/** Users' secondary emails (migration 2026-11-22T1010_keys_emails). */
import type { Generated, Selectable } from 'kysely';

export interface EmailsTable {
  id: Generated<number>;
  user_id: number;
  email: string;
  confirmed_at: string | null;
  created_at: string;
  updated_at: string;
}
export type EmailRow = Selectable<EmailsTable>;

declare module '../types.ts' {
  interface DB {
    emails: EmailsTable;
  }
}
