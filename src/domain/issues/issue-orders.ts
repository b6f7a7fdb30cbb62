/**
 * The orders of the issue lists (Issue.sort_by_attribute of the Service 15.2): created_at,
 * updated_at and title as columns; due date, relative position, the milestone's due date, the
 * best label priority of the issue's project and popularity (👍 count) with missing values last
 * in either direction; the id breaks ties.
 */
import { sql, type Expression } from 'kysely';
import type { IssuesFrom, IssuesShape } from './issues.finder.ts';

export const ISSUE_ORDERS = [
  'created_at', 'updated_at', 'priority', 'due_date', 'relative_position', 'label_priority', 'milestone_due', 'popularity', 'title',
] as const;
export type IssueOrder = (typeof ISSUE_ORDERS)[number];

const nullsLast = (e: Expression<unknown>) => sql`case when ${e} is null then 1 else 0 end`;
const milestoneDue = sql`(select milestones.due_date from milestones where milestones.id = issues.milestone_id)`;
const labelPriority = sql`(select min(label_priorities.priority) from label_links
  inner join label_priorities on label_priorities.label_id = label_links.label_id and label_priorities.project_id = issues.project_id
  where label_links.target_type = 'Issue' and label_links.target_id = issues.id)`;
const upvotes = sql`(select count(*) from award_emoji where award_emoji.awardable_type = 'Issue'
  and award_emoji.awardable_id = issues.id and award_emoji.name = 'thumbsup')`;

/**
 * The orders of Issue.sort_by_attribute: values missing (no due date, no milestone, no priority)
 * last in either direction, the id (newest first) breaking ties.
 */
export function orderIssues(shape: IssuesShape, order: IssueOrder, dir: 'asc' | 'desc'): IssuesShape {
  shape.order(`${order}:${dir}`, (qb) => ordered(qb, order, dir));
  return shape;
}

function ordered(qb: IssuesFrom, order: IssueOrder, dir: 'asc' | 'desc'): IssuesFrom {
  switch (order) {
    case 'created_at': return qb.orderBy('issues.created_at', dir).orderBy('issues.id', dir);
    case 'updated_at': return qb.orderBy('issues.updated_at', dir).orderBy('issues.id', dir);
    case 'title': return qb.orderBy('issues.title', dir).orderBy('issues.id', dir);
    case 'due_date':
    case 'relative_position': {
      const col = sql.ref(`issues.${order}`);
      return qb.orderBy(nullsLast(col)).orderBy(col, dir).orderBy('issues.id', 'desc');
    }
    case 'milestone_due': return qb.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy('issues.id', 'desc');
    case 'label_priority': return qb.orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy('issues.id', 'desc');
    case 'priority':
      return qb.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir)
        .orderBy('issues.id', 'desc');
    case 'popularity': return qb.orderBy(upvotes, dir).orderBy('issues.id', 'desc');
  }
}
