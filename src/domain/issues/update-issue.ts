/**
 * Changing an issue (Issues::UpdateService, CloseService and ReopenService of the Service 15.2, as
 * PUT /projects/:id/issues/:issue_iid calls them). Whoever may update the issue (its author, an
 * assignee, Reporters and up) may change its title, description and state; labels, milestone,
 * assignees, due date, lock, confidentiality and the incident type are triage (admin_issue) and
 * are dropped silently for the others (IssuableBaseService#filter_params); updated_at is the
 * project owner's and administrators'.
 *
 * What a change leaves behind, as the Service writes it: label, milestone and state changes as
 * resource events (no system note in 15.2); title, description, assignees, confidentiality, due
 * date, lock and type changes as system notes; closing sets closed_at and closed_by and records a
 * `closed` event (reopening clears them, `reopened`); todos for a new assignee and for newly
 * mentioned readers. All in one transaction.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { nowIso } from '../clock.ts';
import type { Actor } from '../permissions/access.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { recordEvent } from '../events/events.queries.ts';
import { addSystemNote } from '../notes/system-notes.ts';
import { createTodos, type NewTodo } from '../todos/todos.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { assigneeIdsOf } from './issues.queries.ts';
import {
  availableLabelsByTitle, availableMilestone, labelIdsOfIssue, linkLabels, recordLabelEvents, recordMilestoneEvent, recordStateEvent,
  replaceAssignees, resolveTodosOf, unlinkLabels, updateIssueRow, type IssueUpdate, labelsByIds,
} from './issue-writes.queries.ts';
import { onePerScope } from '../labels/scoped.ts';
import { findOrCreateLabels } from './issue-labels.ts';
import { keptAssignees, mentionedReaders, type IssueProject } from './issue-people.ts';
import { isProjectOwner, labelOwners, type IssueType } from './create-issue.ts';
import {
  assigneesChangeNote, confidentialityNote, DESCRIPTION_CHANGED_NOTE, discussionLockNote, dueDateChangeNote, issueTypeNote,
  titleChangeNote,
} from './issue-system-notes.ts';

export interface UpdateIssueParams {
  title?: string;
  description?: string;
  /** Replaces the labels. */
  labels?: string[];
  addLabels?: string[];
  removeLabels?: string[];
  assigneeIds?: number[];
  /** 0 removes the milestone. */
  milestoneId?: number;
  stateEvent?: 'close' | 'reopen';
  updatedAt?: string;
  /** null removes it. */
  dueDate?: string | null;
  confidential?: boolean;
  discussionLocked?: boolean;
  issueType?: IssueType;
}

export interface UpdateIssueRequest {
  where: IssueProject;
  issue: IssueRow;
  user: UserRow;
  actor: Actor;
  params: UpdateIssueParams;
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id) => b.includes(id));

export async function updateIssue(db: Kysely<DB>, req: UpdateIssueRequest): Promise<IssueRow> {
  const { where, issue, user, actor } = req;
  const p = req.params;
  const triage = canOnProject(actor, 'admin_issue', where.project);
  const owners = labelOwners(where);
  const oldAssignees = (await assigneeIdsOf(db, [issue.id])).get(issue.id) ?? [];
  const newAssignees = triage && p.assigneeIds ? await keptAssignees(db, where, p.assigneeIds) : null;
  const assigneesChanged = newAssignees !== null && !sameIds(newAssignees, oldAssignees);
  const assignees = assigneesChanged ? newAssignees : oldAssignees;

  const set: IssueUpdate = {};
  if (p.title !== undefined && p.title !== issue.title) set.title = p.title;
  if (p.description !== undefined && p.description !== (issue.description ?? '')) set.description = p.description;
  if (triage && p.dueDate !== undefined && p.dueDate !== issue.due_date) set.due_date = p.dueDate;
  if (triage && p.confidential !== undefined && p.confidential !== (issue.confidential === 1)) set.confidential = p.confidential ? 1 : 0;
  if (triage && p.discussionLocked !== undefined && p.discussionLocked !== (issue.discussion_locked === 1)) {
    set.discussion_locked = p.discussionLocked ? 1 : 0;
  }
  // Incidents (and test cases) are triage; anyone who may edit the issue may make it a plain issue (create_issue_type_allowed?).
  if (p.issueType !== undefined && p.issueType !== issue.issue_type && (triage || p.issueType === 'issue')) set.issue_type = p.issueType;
  const closing = p.stateEvent === 'close' && issue.state === 'opened';
  const reopening = p.stateEvent === 'reopen' && issue.state === 'closed';
  const now = nowIso();
  if (closing) Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: user.id });
  if (reopening) Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null });
  if (set.title !== undefined || set.description !== undefined) Object.assign(set, { last_edited_at: now, last_edited_by_id: user.id });

  const changedUsers = assigneesChanged ? await findUsersByIds(db, [...newAssignees, ...oldAssignees]) : [];
  const subject = {
    author_id: issue.author_id, confidential: set.confidential ?? issue.confidential, discussion_locked: null, assignee_ids: assignees,
  };
  // Mentions new to this description (TodoService#update_issue skips users the old text mentioned).
  const wasMentioned = set.description !== undefined ? await mentionedReaders(db, where, subject, issue.description, []) : [];
  const mentioned = set.description !== undefined
    ? await mentionedReaders(db, where, subject, set.description ?? null, [user.id, ...wasMentioned.map((u) => u.id)])
    : [];

  return db.transaction().execute(async (trx) => {
    const oldLabelIds = await labelIdsOfIssue(trx, issue.id);
    let labelIds = oldLabelIds;
    if (triage && (p.labels !== undefined || p.addLabels !== undefined || p.removeLabels !== undefined)) {
      if (p.labels !== undefined) labelIds = (await findOrCreateLabels(trx, owners, p.labels, now)).map((l) => l.id);
      if (p.addLabels !== undefined) {
        const added = await findOrCreateLabels(trx, owners, p.addLabels, now);
        labelIds = [...new Set([...labelIds, ...added.map((l) => l.id)])];
      }
      if (p.removeLabels !== undefined) {
        const removed = new Set((await availableLabelsByTitle(trx, owners, p.removeLabels)).map((l) => l.id));
        labelIds = labelIds.filter((id) => !removed.has(id));
      }
      // One label per scope, the one applied last winning: `labels` in their given order, then `add_labels`.
      const rows = new Map((await labelsByIds(trx, labelIds)).map((l) => [l.id, l]));
      labelIds = onePerScope(labelIds.flatMap((id) => { const l = rows.get(id); return l ? [l] : []; })).map((l) => l.id);
    }
    const addedLabels = labelIds.filter((id) => !oldLabelIds.includes(id));
    const removedLabels = oldLabelIds.filter((id) => !labelIds.includes(id));

    let milestoneId = issue.milestone_id;
    if (triage && p.milestoneId !== undefined) {
      // filter_milestone: 0, or a milestone the project may not take, removes it.
      milestoneId = p.milestoneId === 0 ? null : (await availableMilestone(trx, owners, p.milestoneId))?.id ?? null;
    }
    if (milestoneId !== issue.milestone_id) set.milestone_id = milestoneId;

    // An owner's updated_at is a change of its own (set_issue_updated_at).
    const ownUpdatedAt = isProjectOwner(actor) ? p.updatedAt : undefined;
    const changed = Object.keys(set).length > 0 || assigneesChanged || addedLabels.length > 0 || removedLabels.length > 0
      || ownUpdatedAt !== undefined;
    if (!changed) return issue;
    set.updated_at = ownUpdatedAt ?? now;
    set.updated_by_id = user.id;
    const row = await updateIssueRow(trx, issue.id, set);

    const note = (text: string, action: string) => addSystemNote(trx, {
      project_id: where.project.id, noteable_type: 'Issue', noteable_id: issue.id, author_id: user.id, note: text, action,
    }, now);
    if (set.title !== undefined) await note(titleChangeNote(issue.title, set.title), 'title');
    if (set.description !== undefined) await note(DESCRIPTION_CHANGED_NOTE, 'description');
    if (assigneesChanged) {
      const byId = new Map(changedUsers.map((u) => [u.id, u]));
      const pick = (ids: number[]) => ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
      await replaceAssignees(trx, issue.id, newAssignees);
      await note(assigneesChangeNote(
        pick(newAssignees.filter((id) => !oldAssignees.includes(id))), pick(oldAssignees.filter((id) => !newAssignees.includes(id))),
      ), 'assignee');
    }
    if (set.confidential !== undefined) await note(confidentialityNote(set.confidential === 1), 'confidential');
    if (set.due_date !== undefined) await note(dueDateChangeNote(set.due_date), 'due_date');
    if (set.discussion_locked !== undefined) {
      await note(discussionLockNote(set.discussion_locked === 1), set.discussion_locked ? 'locked' : 'unlocked');
    }
    if (set.issue_type !== undefined) await note(issueTypeNote(set.issue_type), 'issue_type');

    await unlinkLabels(trx, issue.id, removedLabels);
    await linkLabels(trx, issue.id, addedLabels, now);
    await recordLabelEvents(trx, issue.id, user.id, { added: addedLabels, removed: removedLabels }, now);
    if (set.milestone_id !== undefined) {
      await recordMilestoneEvent(trx, issue.id, user.id, set.milestone_id === null
        ? { milestoneId: issue.milestone_id!, action: 'remove', issueState: row.state }
        : { milestoneId: set.milestone_id, action: 'add', issueState: row.state }, now);
    }
    if (closing || reopening) {
      await recordStateEvent(trx, issue.id, user.id, closing ? 'closed' : 'reopened', now);
      await recordEvent(trx, {
        project_id: where.project.id, author_id: user.id, action: closing ? 'closed' : 'reopened',
        target_type: 'Issue', target_id: issue.id,
      }, now);
      if (closing) await resolveTodosOf(trx, issue.id, user.id, now);
    }
    const todo = (user_id: number, action: NewTodo['action']): NewTodo => ({
      user_id, author_id: user.id, project_id: where.project.id, target_type: 'Issue', target_id: issue.id, action,
    });
    await createTodos(trx, [
      ...(assigneesChanged
        ? newAssignees.filter((id) => id !== user.id && !oldAssignees.includes(id)).map((id) => todo(id, 'assigned'))
        : []),
      ...mentioned.map((u) => todo(u.id, 'mentioned')),
    ], now);
    // The issue webhooks with what changed (IssueService#execute_hooks: close, reopen or update).
    const changes: Record<string, { previous: unknown; current: unknown }> = {};
    for (const key of Object.keys(set) as (keyof typeof row)[]) changes[key] = { previous: issue[key], current: row[key] };
    await queueObjectHook(trx, {
      kind: 'issue', id: issue.id, projectId: where.project.id, userId: user.id, changes,
      action: closing ? 'close' : reopening ? 'reopen' : 'update',
    });
    return row;
  });
}
