/**
 * Removing an issue (Issuable::DestroyService): the issue and every row that names it, in one
 * transaction; the project's owners and administrators only (destroy_issue), which the route checks.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { deleteIssueRow } from './issue-writes.queries.ts';

export async function deleteIssue(db: Kysely<DB>, issueId: number): Promise<void> {
  await db.transaction().execute((trx) => deleteIssueRow(trx, issueId));
}
