/**
 * Closing the requests that cross a fork relationship when it ends (Projects::UnlinkForkService of
 * the Service 15.2, which DELETE /projects/:id/fork and Projects::DestroyService run): every open
 * request from the project into another project, and from others into it, is closed as
 * MergeRequests::CloseService closes one — the state, closed_at and closed_by, the `closed` state
 * event (SystemNoteService.change_status writes a resource state event, from which the "closed"
 * system note is shown), the `closed` event, the todos done, the webhooks with action close.
 * Archiving a project does none of this in 15.2 (no UnlinkForkService on archive).
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import { openForkRequestsOf, recordStateEvent, resolveTodosOf, updateMergeRequestRow } from './merge-requests.queries.ts';

/**
 * Closes them in the caller's transaction. `into` false leaves the requests into the project
 * alone, and `goingToo` those into the projects listed: being deleted, they go with them.
 * Answers how many were closed.
 */
export async function closeForkRequests(
  trx: Transaction<DB>, projectId: number, userId: number, o: { into: boolean; goingToo?: number[] },
): Promise<number> {
  const now = nowIso();
  const open = await openForkRequestsOf(trx, projectId, o.into, o.goingToo);
  for (const mr of open) {
    await updateMergeRequestRow(trx, mr.id, {
      state: 'closed', closed_at: now, closed_by_id: userId, merge_when_pipeline_succeeds: 0, updated_at: now,
    });
    await recordStateEvent(trx, mr.id, userId, 'closed', now);
    await recordEvent(trx, {
      project_id: mr.project_id, author_id: userId, action: 'closed', target_type: 'MergeRequest', target_id: mr.id,
    }, now);
    await resolveTodosOf(trx, mr.id, now);
    await queueObjectHook(trx, {
      kind: 'merge_request', id: mr.id, projectId: mr.project_id, action: 'close', userId,
      changes: { state: { previous: mr.state, current: 'closed' }, updated_at: { previous: mr.updated_at, current: now } },
    });
  }
  return open.length;
}
