/** Issues, their assignees, links, resource events and time logs (migration 2026-11-27T1000_collaboration_core). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface IssuesTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  author_id: number;
  title: string;
  description: string | null;
  /** 'opened' | 'closed'. */
  state: string;
  /** 'issue' | 'incident' | 'test_case'. */
  issue_type: Generated<string>;
  milestone_id: number | null;
  due_date: string | null;
  confidential: Generated<Flag>;
  discussion_locked: Flag | null;
  /** Seconds. */
  time_estimate: Generated<number>;
  relative_position: number | null;
  closed_at: string | null;
  closed_by_id: number | null;
  updated_by_id: number | null;
  last_edited_at: string | null;
  last_edited_by_id: number | null;
  moved_to_id: number | null;
  duplicated_to_id: number | null;
  created_at: string;
  updated_at: string;
  /** Counter columns the database keeps (migration 2026-12-02T0500_issuable_counters): comments that are not system notes. */
  user_notes_count: Generated<number>;
  /** 👍 awards. */
  upvotes_count: Generated<number>;
  /** 👎 awards. */
  downvotes_count: Generated<number>;
  /** Seconds, the sum of the time logs. */
  total_time_spent: Generated<number>;
}
export type IssueRow = Selectable<IssuesTable>;

export interface IssueAssigneesTable {
  issue_id: number;
  user_id: number;
}

export interface IssueLinksTable {
  id: Generated<number>;
  source_id: number;
  target_id: number;
  /** 'relates_to' | 'blocks'. */
  link_type: string;
  created_at: string;
  updated_at: string;
}

interface ResourceEventColumns {
  id: Generated<number>;
  issue_id: number | null;
  merge_request_id: number | null;
  user_id: number | null;
  created_at: string;
}

export interface ResourceLabelEventsTable extends ResourceEventColumns {
  label_id: number | null;
  /** 'add' | 'remove'. */
  action: string;
}

export interface ResourceMilestoneEventsTable extends ResourceEventColumns {
  milestone_id: number | null;
  /** 'add' | 'remove'. */
  action: string;
  /** The milestone's state then: 'active' | 'closed'. */
  state: string;
}

export interface ResourceStateEventsTable extends ResourceEventColumns {
  /** 'opened' | 'closed' | 'reopened' | 'merged' | 'locked'. */
  state: string;
  source_commit: string | null;
  source_merge_request_id: number | null;
}

export interface TimelogsTable {
  id: Generated<number>;
  issue_id: number | null;
  merge_request_id: number | null;
  user_id: number | null;
  /** Seconds; negative entries subtract. */
  time_spent: number;
  spent_at: string;
  summary: string | null;
  created_at: string;
  updated_at: string;
}

export interface UserAgentDetailsTable {
  id: Generated<number>;
  /** 'Issue' | 'Snippet'. */
  subject_type: string;
  subject_id: number;
  user_agent: string;
  ip_address: string;
  submitted: Generated<Flag>;
  created_at: string;
}

declare module '../types.ts' {
  interface DB {
    issues: IssuesTable;
    issue_assignees: IssueAssigneesTable;
    issue_links: IssueLinksTable;
    resource_label_events: ResourceLabelEventsTable;
    resource_milestone_events: ResourceMilestoneEventsTable;
    resource_state_events: ResourceStateEventsTable;
    timelogs: TimelogsTable;
    user_agent_details: UserAgentDetailsTable;
  }
}

declare module './projects.ts' {
  interface ProjectsTable {
    /** Open issues, and those of them not confidential (migration 2026-11-29T0910; triggers keep them). */
    open_issues_count: Generated<number>;
    open_public_issues_count: Generated<number>;
  }
}
