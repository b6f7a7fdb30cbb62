/**
 * The archive kiln exports and imports (issue 32, item 6): a tar.gz holding
 *
 *   VERSION              the format's version, one line
 *   project.json         the project's records (versioned: `version` inside too)
 *   repository.bundle    `git bundle` of every ref of the repository (absent when it has none)
 *   wiki.bundle          the same of the wiki
 *
 * and for a group `VERSION` and `group.json`. Records keep their source ids only to refer to each
 * other inside the file; people are referred to by id into `users` (username and e-mail), which
 * an import maps to its own users (else the importer).
 */
export const FORMAT_VERSION = '1';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** The entries of a project archive and each one's bound. */
export const PROJECT_ENTRIES: Record<string, number> = {
  VERSION: 64,
  'project.json': 256 * MiB,
  'repository.bundle': 4 * GiB,
  'wiki.bundle': GiB,
};

export const GROUP_ENTRIES: Record<string, number> = {
  VERSION: 64,
  'group.json': 64 * MiB,
};

export interface UserRef { username: string; email: string }

export interface ProjectDocument {
  version: string;
  exported_at: string;
  project: Record<string, unknown>;
  users: Record<string, UserRef>;
  labels: Record<string, unknown>[];
  milestones: Record<string, unknown>[];
  issues: Record<string, unknown>[];
  issue_assignees: Record<string, unknown>[];
  merge_requests: Record<string, unknown>[];
  merge_request_assignees: Record<string, unknown>[];
  merge_request_reviewers: Record<string, unknown>[];
  merge_request_diffs: Record<string, unknown>[];
  merge_request_diff_commits: Record<string, unknown>[];
  label_links: Record<string, unknown>[];
  notes: Record<string, unknown>[];
  award_emoji: Record<string, unknown>[];
  ci_variables: Record<string, unknown>[];
  pipelines: Record<string, unknown>[];
  members: Record<string, unknown>[];
}

export interface GroupDocumentNode {
  name: string;
  path: string;
  description: string;
  visibility_level: number;
  labels: Record<string, unknown>[];
  milestones: Record<string, unknown>[];
  members: Record<string, unknown>[];
  subgroups: GroupDocumentNode[];
}

export interface GroupDocument {
  version: string;
  exported_at: string;
  users: Record<string, UserRef>;
  group: GroupDocumentNode;
}

/** The lists a project document must have. */
export const PROJECT_LISTS = [
  'labels', 'milestones', 'issues', 'issue_assignees', 'merge_requests', 'merge_request_assignees', 'merge_request_reviewers',
  'merge_request_diffs', 'merge_request_diff_commits', 'label_links', 'notes', 'award_emoji', 'ci_variables', 'pipelines', 'members',
] as const;
