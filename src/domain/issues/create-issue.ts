/**
 * Opening an issue (Issues::CreateService of the Service 15.2, as POST /projects/:id/issues calls
 * it). What the author may set follows IssuableBaseService#filter_params: labels, milestone,
 * assignees and due date are triage (`set_issue_metadata`, i.e. admin_issue) and are dropped
 * silently for anyone else; confidentiality may be chosen by anyone who may open the issue
 * (IssuePolicy `set_confidentiality` for a new issue); iid and created_at are the project owner's
 * and administrators' (`set_issue_iid`, `set_issue_created_at`). A milestone that is neither the
 * project's nor one of its groups' is left out (filter_milestone). Everything the creation writes
 * — the issue, its assignee, label links, the resource events and due date note of
 * Issuable::CommonSystemNotesService, the `created` event, todos for the assignee and for
 * mentioned readers, and who submitted it from where (UserAgentDetail) — is one transaction.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import type { Actor } from '../permissions/access.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { recordEvent } from '../events/events.queries.ts';
import { addSystemNote } from '../notes/system-notes.ts';
import { createTodos, type NewTodo } from '../todos/todos.queries.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';
import {
  availableMilestone, insertIssue, linkLabels, recordLabelEvents, recordMilestoneEvent, replaceAssignees,
  type LabelOwners,
} from './issue-writes.queries.ts';
import { onePerScope } from '../labels/scoped.ts';
import { recordUserAgentDetail, type RequestOrigin } from '../spam/user-agent-details.queries.ts';
import { findOrCreateLabels } from './issue-labels.ts';
import { keptAssignees, mentionedReaders, type IssueProject } from './issue-people.ts';
import { dueDateChangeNote } from './issue-system-notes.ts';

export const ISSUE_TYPES = ['issue', 'incident', 'test_case'] as const;
export type IssueType = (typeof ISSUE_TYPES)[number];

export interface CreateIssueParams {
  title: string;
  description?: string;
  confidential?: boolean;
  issueType?: IssueType;
  dueDate?: string;
  milestoneId?: number;
  labels?: string[];
  assigneeIds?: number[];
  iid?: number;
  createdAt?: string;
}

export interface CreateIssueRequest {
  where: IssueProject;
  author: UserRow;
  actor: Actor;
  params: CreateIssueParams;
  /** The request's User-Agent and address (UserAgentDetail). */
  origin: RequestOrigin;
}

export type CreateIssueResult = { ok: true; value: IssueRow } | { ok: false; reason: 'duplicate' };

/** set_issue_iid / set_issue_created_at / set_issue_updated_at: the project's owners and administrators. */
export function isProjectOwner(actor: Actor): boolean {
  return Boolean(actor.user?.admin) || actor.accessLevel >= ACCESS_LEVELS.owner;
}

export function labelOwners(where: IssueProject): LabelOwners {
  return { projectId: where.project.id, groupIds: where.lineage };
}

export async function createIssue(db: Kysely<DB>, req: CreateIssueRequest): Promise<CreateIssueResult> {
  const { where, author, actor } = req;
  const p = req.params;
  const triage = canOnProject(actor, 'admin_issue', where.project);
  const owner = isProjectOwner(actor);
  const owners = labelOwners(where);
  const assignees = triage && p.assigneeIds ? (await keptAssignees(db, where, p.assigneeIds)) ?? [] : [];
  const now = nowIso();
  const createdAt = owner && p.createdAt ? p.createdAt : now;
  // Read outside the transaction: on SQLite the one connection is the transaction's until it ends.
  const subject = { author_id: author.id, confidential: Boolean(p.confidential), discussion_locked: null, assignee_ids: assignees };
  const mentioned = await mentionedReaders(db, where, subject, p.description ?? null, [author.id]);

  try {
    const issue = await db.transaction().execute(async (trx) => {
      const milestone = triage && p.milestoneId ? await availableMilestone(trx, owners, p.milestoneId) : undefined;
      const iid = owner && p.iid !== undefined ? p.iid : await nextIid(trx, { project_id: where.project.id }, 'issues');
      const row = await insertIssue(trx, {
        iid, project_id: where.project.id, author_id: author.id, title: p.title, description: p.description ?? null,
        state: 'opened', issue_type: p.issueType ?? 'issue', milestone_id: milestone?.id ?? null,
        due_date: triage ? p.dueDate ?? null : null, confidential: p.confidential ? 1 : 0, discussion_locked: null,
        relative_position: null, closed_at: null, closed_by_id: null, updated_by_id: null, last_edited_at: null,
        last_edited_by_id: null, moved_to_id: null, duplicated_to_id: null, created_at: createdAt, updated_at: now,
      });
      await replaceAssignees(trx, row.id, assignees);
      if (triage && p.labels && p.labels.length > 0) {
        const labels = onePerScope(await findOrCreateLabels(trx, owners, p.labels, now));
        await linkLabels(trx, row.id, labels.map((l) => l.id), now);
        await recordLabelEvents(trx, row.id, author.id, { added: labels.map((l) => l.id), removed: [] }, createdAt);
      }
      if (milestone) {
        await recordMilestoneEvent(trx, row.id, author.id, { milestoneId: milestone.id, action: 'add', issueState: 'opened' }, createdAt);
      }
      if (row.due_date !== null) {
        await addSystemNote(trx, {
          project_id: where.project.id, noteable_type: 'Issue', noteable_id: row.id, author_id: author.id,
          note: dueDateChangeNote(row.due_date), action: 'due_date',
        }, createdAt);
      }
      await recordEvent(trx, {
        project_id: where.project.id, author_id: author.id, action: 'created', target_type: 'Issue', target_id: row.id,
      });
      const todo = (user_id: number, action: NewTodo['action']): NewTodo => ({
        user_id, author_id: author.id, project_id: where.project.id, target_type: 'Issue', target_id: row.id, action,
      });
      await createTodos(trx, [
        ...assignees.filter((id) => id !== author.id).map((id) => todo(id, 'assigned')),
        ...mentioned.map((u) => todo(u.id, 'mentioned')),
      ], now);
      await recordUserAgentDetail(trx, 'Issue', row.id, req.origin);
      // The issue webhooks, queued with the issue (IssueService#execute_hooks, action open).
      await queueObjectHook(trx, { kind: 'issue', id: row.id, projectId: where.project.id, action: 'open', userId: author.id });
      return row;
    });
    return { ok: true, value: issue };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'duplicate' };
    throw err;
  }
}
