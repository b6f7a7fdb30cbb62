/** Merge requests, their people and diff versions (migration 2026-11-28T1200_merge_requests). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface MergeRequestsTable {
  id: Generated<number>;
  iid: number;
  /** The target project. */
  project_id: number;
  source_project_id: number | null;
  source_branch: string;
  target_branch: string;
  author_id: number;
  title: string;
  description: string | null;
  /** 'opened' | 'closed' | 'merged' | 'locked'. */
  state: string;
  /** 'unchecked' | 'checking' | 'can_be_merged' | 'cannot_be_merged' | 'cannot_be_merged_recheck'. */
  merge_status: string;
  draft: Generated<Flag>;
  squash: Generated<Flag>;
  force_remove_source_branch: Flag | null;
  should_remove_source_branch: Flag | null;
  merge_when_pipeline_succeeds: Generated<Flag>;
  merge_user_id: number | null;
  /** JSON of the merge's options while it waits for a pipeline. */
  merge_params: string | null;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  merge_error: string | null;
  merged_by_id: number | null;
  merged_at: string | null;
  closed_by_id: number | null;
  closed_at: string | null;
  milestone_id: number | null;
  discussion_locked: Flag | null;
  time_estimate: Generated<number>;
  rebase_in_progress: Generated<Flag>;
  rebase_commit_sha: string | null;
  merge_ref_sha: string | null;
  /** "<source head> <target head>" the merge status was computed for. */
  merge_status_heads: string | null;
  /** A fork's request lets the target's mergers push to its source branch (migration 2026-11-30T0200). */
  allow_collaboration: Generated<Flag>;
  updated_by_id: number | null;
  last_edited_at: string | null;
  last_edited_by_id: number | null;
  created_at: string;
  updated_at: string;
  /** Counter columns the database keeps (migration 2026-12-02T0500_issuable_counters), as on issues. */
  user_notes_count: Generated<number>;
  upvotes_count: Generated<number>;
  downvotes_count: Generated<number>;
  total_time_spent: Generated<number>;
  /** Resolvable notes not yet resolved. */
  unresolved_notes_count: Generated<number>;
}
export type MergeRequestRow = Selectable<MergeRequestsTable>;

export interface MergeRequestUsersTable {
  merge_request_id: number;
  user_id: number;
  created_at: string;
}

export interface MergeRequestDiffsTable {
  id: Generated<number>;
  merge_request_id: number;
  head_commit_sha: string;
  base_commit_sha: string | null;
  start_commit_sha: string | null;
  /** 'collected' | 'empty'. */
  state: string;
  real_size: string | null;
  created_at: string;
}
export type MergeRequestDiffRow = Selectable<MergeRequestDiffsTable>;

/** A commit of a diff version, newest first (migration 2026-11-28T1210). */
export interface MergeRequestDiffCommitsTable {
  id: Generated<number>;
  merge_request_diff_id: number;
  sha: string;
  relative_order: number;
}

/** An issue an open request closes on merge (migration 2026-11-29T0900). */
export interface MergeRequestsClosingIssuesTable {
  id: Generated<number>;
  merge_request_id: number;
  issue_id: number;
  created_at: string;
  updated_at: string;
}

declare module '../types.ts' {
  interface DB {
    merge_requests_closing_issues: MergeRequestsClosingIssuesTable;
    merge_request_diff_commits: MergeRequestDiffCommitsTable;
    merge_requests: MergeRequestsTable;
    merge_request_assignees: MergeRequestUsersTable;
    merge_request_reviewers: MergeRequestUsersTable;
    approvals: MergeRequestUsersTable;
    merge_request_diffs: MergeRequestDiffsTable;
  }
}
