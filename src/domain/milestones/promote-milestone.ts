/**
 * Promoting a project milestone to its group (Milestones::PromoteService, 15.2): the group gets a
 * milestone of that title, dates, description and state (numbered in the group's sequence), the
 * issues of every milestone of that title in the group's projects move to it, and those project
 * milestones go — in one transaction.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';
import { deleteMilestoneRows, insertMilestone, moveMilestoneIssues, sameTitledProjectMilestoneIds } from './milestones.queries.ts';

export type PromoteResult = { ok: true; milestone: MilestoneRow } | { ok: false; message: string };

export async function promoteMilestone(
  db: Kysely<DB>, row: MilestoneRow, groupId: number, groupProjectIds: number[], authorId: number,
): Promise<PromoteResult> {
  const now = nowIso();
  try {
    const milestone = await db.transaction().execute(async (trx) => {
      const iid = await nextIid(trx, { namespace_id: groupId }, 'group_milestones');
      const created = await insertMilestone(trx, {
        iid, project_id: null, group_id: groupId, title: row.title, description: row.description, state: row.state,
        due_date: row.due_date, start_date: row.start_date, created_at: now, updated_at: now,
      });
      const ids = new Set(await sameTitledProjectMilestoneIds(trx, groupProjectIds, row.title));
      ids.add(row.id);
      await moveMilestoneIssues(trx, [...ids], created.id);
      await deleteMilestoneRows(trx, [...ids]);
      await recordEvent(trx, {
        project_id: null, group_id: groupId, author_id: authorId, action: 'created', target_type: 'Milestone', target_id: created.id,
      }, now);
      return created;
    });
    return { ok: true, milestone };
  } catch (err) {
    // The group already has a milestone of this title (its unique index).
    if (isUniqueViolation(err)) {
      return { ok: false, message: 'Promotion failed - Title already being used for another group or project milestone.' };
    }
    throw err;
  }
}
