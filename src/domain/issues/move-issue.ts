/**
 * Moving and cloning an issue to another project (Issues::MoveService, Issues::CloneService over
 * Issuable::Clone::BaseService and AttributesRewriter of the Service 15.2), in one transaction:
 * a new issue with the next iid of the target, the same title, description, state, dates and
 * assignees (its author too when moved; the caller's when cloned); labels and milestone matched
 * by title among those the target may use; the label, milestone and state history; award
 * emoji; the notes (always when moving, with `with_notes` when cloning) with their award emoji;
 * time logs when moving. A moved issue is closed and points at its copy. Both sides get the
 * system note SystemNotes::IssuablesService writes ("moved to …" / "moved from …",
 * "cloned to …" / "cloned from …"). References inside copied text are not rewritten.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';
import { addSystemNote, newDiscussionId } from '../notes/system-notes.ts';

export interface CopyIssue {
  mode: 'move' | 'clone';
  source: IssueRow;
  userId: number;
  /** The target project and its namespaces, its own first: whose group labels and milestones it may use. */
  target: { projectId: number; lineage: number[] };
  withNotes: boolean;
  /** The source issue named from the target project (`group/project#3`). */
  sourceRefFromTarget: string;
  /** The target project named from the source project (`group/other`, `other`), without `#iid`. */
  targetPrefixFromSource: string;
}

/** The labels and milestone the target may use, matched by title (AttributesRewriter). */
async function matching(trx: Transaction<DB>, c: CopyIssue) {
  const sourceLabels = await trx.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
    .select('labels.title').where('label_links.target_type', '=', 'Issue').where('label_links.target_id', '=', c.source.id).execute();
  const titles = [...new Set(sourceLabels.map((l) => l.title))];
  const groups = c.target.lineage.length > 0 ? c.target.lineage : [-1];
  const labels = titles.length === 0 ? [] : await trx.selectFrom('labels').select(['id', 'title'])
    .where('title', 'in', titles)
    .where((eb) => eb.or([eb('project_id', '=', c.target.projectId), eb('group_id', 'in', groups)]))
    .orderBy('id').execute();
  const labelIds = [...new Map(labels.map((l) => [l.title, l.id])).values()];
  const milestoneByTitle = async (title: string | null | undefined) => (title == null ? undefined : await trx.selectFrom('milestones')
    .select('id').where('title', '=', title)
    .where((eb) => eb.or([eb('project_id', '=', c.target.projectId), eb('group_id', 'in', groups)]))
    .orderBy('id').executeTakeFirst());
  return { labelIds, milestoneByTitle };
}

type MilestoneByTitle = (title: string | null) => Promise<{ id: number } | undefined>;

async function copyHistory(trx: Transaction<DB>, c: CopyIssue, newId: number, milestoneByTitle: MilestoneByTitle) {
  const labelEvents = await trx.selectFrom('resource_label_events').selectAll().where('issue_id', '=', c.source.id).orderBy('id').execute();
  for (const { id: _id, ...e } of labelEvents) await trx.insertInto('resource_label_events').values({ ...e, issue_id: newId }).execute();
  const milestoneEvents = await trx.selectFrom('resource_milestone_events')
    .leftJoin('milestones', 'milestones.id', 'resource_milestone_events.milestone_id')
    .selectAll('resource_milestone_events').select('milestones.title').where('resource_milestone_events.issue_id', '=', c.source.id)
    .orderBy('resource_milestone_events.id').execute();
  for (const { id: _id, title, ...e } of milestoneEvents) {
    // A removal is kept without its milestone; an addition only when the target has a milestone of that title.
    const milestone = e.action === 'remove' ? null : await milestoneByTitle(title);
    if (milestone === undefined) continue;
    await trx.insertInto('resource_milestone_events').values({ ...e, issue_id: newId, milestone_id: milestone?.id ?? null }).execute();
  }
  const stateEvents = await trx.selectFrom('resource_state_events').selectAll().where('issue_id', '=', c.source.id).orderBy('id').execute();
  for (const { id: _id, ...e } of stateEvents) await trx.insertInto('resource_state_events').values({ ...e, issue_id: newId }).execute();
}

async function copyAwards(trx: Transaction<DB>, type: 'Issue' | 'Note', fromId: number, toId: number) {
  const awards = await trx.selectFrom('award_emoji').selectAll().where('awardable_type', '=', type).where('awardable_id', '=', fromId)
    .orderBy('id').execute();
  for (const { id: _id, ...a } of awards) await trx.insertInto('award_emoji').values({ ...a, awardable_id: toId }).execute();
}

/** Notes::CopyService: every note with its times and author, threads kept together under new ids. */
async function copyNotes(trx: Transaction<DB>, c: CopyIssue, newId: number) {
  const notes = await trx.selectFrom('notes').selectAll().where('noteable_type', '=', 'Issue').where('noteable_id', '=', c.source.id)
    .orderBy('created_at').orderBy('id').execute();
  const discussions = new Map<string, string>();
  for (const { id, ...n } of notes) {
    let discussion = discussions.get(n.discussion_id);
    if (!discussion) discussions.set(n.discussion_id, discussion = newDiscussionId());
    const row = await trx.insertInto('notes')
      .values({ ...n, noteable_id: newId, project_id: c.target.projectId, discussion_id: discussion })
      .returning('id').executeTakeFirstOrThrow();
    await copyAwards(trx, 'Note', id, row.id);
  }
}


export async function copyIssue(db: Kysely<DB>, c: CopyIssue): Promise<IssueRow> {
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    const s = c.source;
    const iid = await nextIid(trx, { project_id: c.target.projectId }, 'issues');
    const { labelIds, milestoneByTitle } = await matching(trx, c);
    const sourceMilestone = s.milestone_id === null ? undefined
      : await trx.selectFrom('milestones').select('title').where('id', '=', s.milestone_id).executeTakeFirst();
    const milestone = await milestoneByTitle(sourceMilestone?.title);
    const created = await trx.insertInto('issues').values({
      iid, project_id: c.target.projectId, author_id: c.mode === 'move' ? s.author_id : c.userId,
      title: s.title, description: s.description,
      state: s.state, issue_type: s.issue_type, milestone_id: milestone?.id ?? null, due_date: s.due_date, confidential: s.confidential,
      discussion_locked: s.discussion_locked, time_estimate: s.time_estimate, relative_position: null, closed_at: s.closed_at,
      closed_by_id: s.closed_by_id, updated_by_id: null, last_edited_at: s.last_edited_at, last_edited_by_id: s.last_edited_by_id,
      moved_to_id: null, duplicated_to_id: null, created_at: s.created_at, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();

    const assignees = await trx.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', s.id).execute();
    for (const a of assignees) await trx.insertInto('issue_assignees').values({ issue_id: created.id, user_id: a.user_id }).execute();
    for (const label_id of labelIds) {
      await trx.insertInto('label_links')
        .values({ label_id, target_type: 'Issue', target_id: created.id, created_at: now, updated_at: now }).execute();
    }
    await copyHistory(trx, c, created.id, milestoneByTitle);
    await copyAwards(trx, 'Issue', s.id, created.id);
    if (c.mode === 'move' || c.withNotes) await copyNotes(trx, c, created.id);
    if (c.mode === 'move') {
      const logs = await trx.selectFrom('timelogs').selectAll().where('issue_id', '=', s.id).orderBy('id').execute();
      for (const { id: _id, ...l } of logs) await trx.insertInto('timelogs').values({ ...l, issue_id: created.id }).execute();
    }
    await recordEvent(trx, {
      project_id: c.target.projectId, author_id: c.userId, action: 'created', target_type: 'Issue', target_id: created.id,
    }, now);

    if (c.mode === 'move') {
      const current = await trx.selectFrom('issues').select('state').where('id', '=', s.id).executeTakeFirstOrThrow();
      if (current.state === 'opened') {
        // Issues::CloseService: the state, who closed it, its state event and event, the closer's todos on it done.
        await trx.updateTable('issues').set({ state: 'closed', closed_at: now, closed_by_id: c.userId })
          .where('id', '=', s.id).execute();
        await trx.insertInto('resource_state_events').values({
          issue_id: s.id, merge_request_id: null, user_id: c.userId, state: 'closed', source_commit: null, source_merge_request_id: null,
          created_at: now,
        }).execute();
        await recordEvent(trx, {
          project_id: s.project_id, author_id: c.userId, action: 'closed', target_type: 'Issue', target_id: s.id,
        }, now);
        await trx.updateTable('todos').set({ state: 'done', updated_at: now }).where('user_id', '=', c.userId)
          .where('target_type', '=', 'Issue').where('target_id', '=', s.id).where('state', '=', 'pending').execute();
      }
      await trx.updateTable('issues').set({ moved_to_id: created.id, updated_at: now }).where('id', '=', s.id).execute();
    }
    const verb = c.mode === 'move' ? 'moved' : 'cloned';
    await addSystemNote(trx, {
      project_id: c.target.projectId, noteable_type: 'Issue', noteable_id: created.id, author_id: c.userId,
      note: `${verb} from ${c.sourceRefFromTarget}`, action: verb,
    }, now);
    await addSystemNote(trx, {
      project_id: s.project_id, noteable_type: 'Issue', noteable_id: s.id, author_id: c.userId,
      note: `${verb} to ${c.targetPrefixFromSource}#${created.iid}`, action: verb,
    }, now);
    return created;
  });
}
