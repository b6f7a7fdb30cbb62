/**
 * Who submitted an issue or a snippet from where (the Service's UserAgentDetail, written by
 * UserAgentDetailService when the spammable is created through the API, read by administrators
 * at `…/user_agent_detail`). One row per subject (unique index user_agent_details_subject).
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserAgentDetailsTable } from '../../db/tables/issues.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type UserAgentDetailRow = Selectable<UserAgentDetailsTable>;
/** The Service's polymorphic base class names of the spammables. */
export type UserAgentSubject = 'Issue' | 'Snippet';

export interface RequestOrigin {
  userAgent: string;
  ipAddress: string;
}

/** UserAgentDetailService#create: nothing without both a user agent and an address. */
export async function recordUserAgentDetail(
  db: Db, subjectType: UserAgentSubject, subjectId: number, origin: RequestOrigin,
): Promise<void> {
  if (!origin.userAgent || !origin.ipAddress) return;
  await db.insertInto('user_agent_details').values({
    subject_type: subjectType, subject_id: subjectId, user_agent: origin.userAgent, ip_address: origin.ipAddress, created_at: nowIso(),
  }).execute();
}

export function findUserAgentDetail(db: Db, subjectType: UserAgentSubject, subjectId: number): Promise<UserAgentDetailRow | undefined> {
  return db.selectFrom('user_agent_details').selectAll()
    .where('subject_type', '=', subjectType).where('subject_id', '=', subjectId).executeTakeFirst();
}

/** The subject went (has_one :user_agent_detail, dependent: :destroy). */
export async function deleteUserAgentDetail(db: Db, subjectType: UserAgentSubject, subjectId: number): Promise<void> {
  await db.deleteFrom('user_agent_details').where('subject_type', '=', subjectType).where('subject_id', '=', subjectId).execute();
}
