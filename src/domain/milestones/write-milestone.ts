/**
 * Creating, changing and deleting milestones (Milestones::CreateService, UpdateService,
 * CloseService, ReopenService, DestroyService of the Service 15.2): each write and its event
 * ('created', 'closed', 'reopened', 'destroyed' on target 'Milestone') in one transaction; the iid
 * from the owner's sequence ('milestones' per project, 'group_milestones' per group). The title's
 * uniqueness among the owner's milestones is the unique index's; among the owner's relatives
 * (a project's group, a group's projects) it is checked before the write, as the model does.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';
import {
  deleteMilestoneRow, insertMilestone, milestoneTitleTaken, updateMilestoneRow, type MilestoneScope,
} from './milestones.queries.ts';
import { milestoneErrors, TITLE_TAKEN, type MilestoneAttributes, type ValidationErrors } from './milestone-attributes.ts';

export type MilestoneOwner = { projectId: number; groupId?: undefined } | { groupId: number; projectId?: undefined };

export type MilestoneResult = { ok: true; milestone: MilestoneRow } | { ok: false; errors: ValidationErrors };

const taken = (): MilestoneResult => ({ ok: false, errors: { title: [TITLE_TAKEN] } });

/** `relatives`: the milestones whose titles a new one may not repeat (the owner's and its group's or projects'). */
export async function createMilestone(
  db: Kysely<DB>, owner: MilestoneOwner, relatives: MilestoneScope, authorId: number,
  input: { title: string; description?: string | null; due_date?: string | null; start_date?: string | null },
): Promise<MilestoneResult> {
  const merged = {
    title: input.title.trim(), description: input.description ?? null,
    due_date: input.due_date ?? null, start_date: input.start_date ?? null,
  };
  const errors = milestoneErrors(merged);
  if (errors) return { ok: false, errors };
  if (await milestoneTitleTaken(db, relatives, merged.title)) return taken();
  const now = nowIso();
  try {
    const milestone = await db.transaction().execute(async (trx) => {
      const iid = owner.projectId !== undefined
        ? await nextIid(trx, { project_id: owner.projectId }, 'milestones')
        : await nextIid(trx, { namespace_id: owner.groupId }, 'group_milestones');
      const row = await insertMilestone(trx, {
        ...merged, iid, project_id: owner.projectId ?? null, group_id: owner.groupId ?? null, state: 'active',
        created_at: now, updated_at: now,
      });
      await recordEvent(trx, eventOf(row, authorId, 'created'), now);
      return row;
    });
    return { ok: true, milestone };
  } catch (err) {
    if (isUniqueViolation(err)) return taken();
    throw err;
  }
}

function eventOf(row: MilestoneRow, authorId: number, action: 'created' | 'closed' | 'reopened' | 'destroyed') {
  return { project_id: row.project_id, group_id: row.group_id, author_id: authorId, action, target_type: 'Milestone', target_id: row.id };
}

export async function updateMilestone(
  db: Kysely<DB>, row: MilestoneRow, relatives: MilestoneScope, authorId: number,
  input: MilestoneAttributes & { state_event?: 'close' | 'activate' },
): Promise<MilestoneResult> {
  const merged = {
    title: input.title !== undefined ? input.title.trim() : row.title,
    description: input.description !== undefined ? input.description : row.description,
    due_date: input.due_date !== undefined ? input.due_date : row.due_date,
    start_date: input.start_date !== undefined ? input.start_date : row.start_date,
  };
  const errors = milestoneErrors(merged);
  if (errors) return { ok: false, errors };
  if (merged.title !== row.title && await milestoneTitleTaken(db, relatives, merged.title, row.id)) return taken();
  const state = input.state_event === 'close' ? 'closed' : input.state_event === 'activate' ? 'active' : row.state;
  const now = nowIso();
  try {
    const milestone = await db.transaction().execute(async (trx) => {
      const updated = (await updateMilestoneRow(trx, row.id, { ...merged, state, updated_at: now }))!;
      if (state !== row.state) await recordEvent(trx, eventOf(updated, authorId, state === 'closed' ? 'closed' : 'reopened'), now);
      return updated;
    });
    return { ok: true, milestone };
  } catch (err) {
    if (isUniqueViolation(err)) return taken();
    throw err;
  }
}

export async function deleteMilestone(db: Kysely<DB>, row: MilestoneRow, authorId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await recordEvent(trx, eventOf(row, authorId, 'destroyed'));
    await deleteMilestoneRow(trx, row.id);
  });
}
