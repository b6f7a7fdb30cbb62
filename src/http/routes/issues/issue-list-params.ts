/**
 * The filters every issue list and issue statistics route declares (lib/api/issues.rb
 * `issues_params` and `issues_stats_params` of the Service 15.2), and how they become the
 * finder's filters: `None`/`Any` (any case) where the Service takes them, `No Label` as `None`
 * for labels, `not[…]` for the negated ones.
 */
import {
  DUE_DATE_FILTERS, type IssueContainer, type IssueFilters, type Special,
} from '../../../domain/issues/issues.finder.ts';
import { ISSUE_ORDERS } from '../../../domain/issues/issue-orders.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import type { ProjectContext } from '../../loaders/containers.ts';
import { ISSUE_TYPES } from '../../../domain/issues/create-issue.ts';
import { invalidParams } from '../../errors.ts';
import { P } from '../../input/params.ts';

const titles = (description: string) => P.optional(P.array(P.name(), { commaSeparated: true, description }));
const usernames = (description: string) => P.optional(P.array(P.name(), { description }));
const iids = (description: string) => P.optional(P.array(P.integer(), { description }));
const noneAny = (description: string) => P.optional(P.string({ maxLength: 255, description }));

/** The filters of statistics and lists alike. */
export const issueFilterParams = {
  labels: titles('comma-separated label titles (all must match); None, Any'),
  milestone: P.optional(P.name({ description: 'milestone title; None, Any, Upcoming, Started' })),
  milestone_id: P.optional(P.oneOf(['None', 'Any', 'Upcoming', 'Started'] as const, { description: 'milestone timebox' })),
  iids: iids('only these iids'),
  search: P.optional(P.name({ description: 'text in title or description' })),
  in: P.optional(P.array(P.oneOf(['title', 'description'] as const), { commaSeparated: true, description: 'where to search' })),
  author_id: P.optional(P.integer({ description: 'author user id' })),
  author_username: P.optional(P.name({ description: 'author username' })),
  assignee_id: noneAny('assignee user id; None, Any'),
  assignee_username: usernames('assignee usernames'),
  my_reaction_emoji: noneAny('emoji the caller awarded; None, Any'),
  created_after: P.optional(P.dateTime()),
  created_before: P.optional(P.dateTime()),
  updated_after: P.optional(P.dateTime()),
  updated_before: P.optional(P.dateTime()),
  confidential: P.optional(P.boolean({ description: 'confidential issues only, or none' })),
  issue_type: P.optional(P.oneOf(ISSUE_TYPES, { description: 'issue, incident or test_case' })),
  due_date: P.optional(P.oneOf(DUE_DATE_FILTERS, { description: 'due date window' })),
  not: P.optional(P.object({
    labels: titles('none of these labels'),
    milestone: P.optional(P.name()),
    author_id: P.optional(P.integer()),
    author_username: P.optional(P.name()),
    assignee_id: P.optional(P.integer()),
    assignee_username: usernames('not assigned to these'),
    my_reaction_emoji: P.optional(P.name()),
    iids: iids('not these iids'),
  }, { description: 'negated filters' })),
  scope: P.optional(P.oneOf(['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const)),
};

/** Lists add their state, order and presentation. */
export const issueListParams = {
  ...issueFilterParams,
  state: P.optional(P.oneOf(['opened', 'closed', 'all'] as const, { default: 'all' })),
  order_by: P.optional(P.oneOf(ISSUE_ORDERS, { default: 'created_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  with_labels_details: P.optional(P.boolean({ default: false })),
};

/** Group and instance lists leave archived projects' issues out unless told otherwise. */
export const nonArchivedParam = {
  non_archived: P.optional(P.boolean({ default: true, description: "leave archived projects' issues out" })),
};

/**
 * A project's lists: its issues, the confidential ones only for Reporters and up (and their
 * authors and assignees); none, with 200, when its issues are closed to the viewer.
 */
export function projectContainer(ctx: ProjectContext): IssueContainer {
  return {
    project: {
      id: ctx.project.id, canRead: canOnProject(ctx.actor, 'read_issue', ctx.project),
      canReadConfidential: canOnProject(ctx.actor, 'read_confidential_issues', ctx.project),
    },
  };
}

type FilterInput = {
  labels?: string[]; milestone?: string; milestone_id?: string; iids?: number[]; search?: string; in?: ('title' | 'description')[];
  author_id?: number; author_username?: string; assignee_id?: string; assignee_username?: string[]; my_reaction_emoji?: string;
  created_after?: string; created_before?: string; updated_after?: string; updated_before?: string; confidential?: boolean;
  issue_type?: string; due_date?: (typeof DUE_DATE_FILTERS)[number]; scope?: string; state?: 'opened' | 'closed' | 'all';
  non_archived?: boolean;
  not?: {
    labels?: string[]; milestone?: string; author_id?: number; author_username?: string; assignee_id?: number;
    assignee_username?: string[]; my_reaction_emoji?: string; iids?: number[];
  };
};

function special<T>(value: string, parse: (v: string) => T): Special<T> {
  const lower = value.toLowerCase();
  if (lower === 'none') return { none: true };
  if (lower === 'any') return { any: true };
  return { value: parse(value) };
}

function labelsFilter(labels: string[]): Special<string[]> {
  if (labels.length === 1 && ['none', 'no label'].includes(labels[0].toLowerCase())) return { none: true };
  if (labels.length === 1 && labels[0].toLowerCase() === 'any') return { any: true };
  return { value: labels };
}

function milestoneFilter(m: string): NonNullable<IssueFilters['milestone']> {
  const lower = m.toLowerCase();
  if (lower === 'upcoming' || m === '#upcoming') return { upcoming: true };
  if (lower === 'started' || m === '#started') return { started: true };
  return special(m, (v) => v);
}

/**
 * The finder's filters from a route's validated input; a scope the route does not name by
 * default is `all` (project and group lists) or `created_by_me` (GET /issues).
 */
export function issueFilters(input: FilterInput, defaultScope: 'all' | 'created_by_me'): IssueFilters {
  if (input.milestone !== undefined && input.milestone_id !== undefined) {
    throw invalidParams(['milestone, milestone_id are mutually exclusive']);
  }
  if (input.author_id !== undefined && input.author_username !== undefined) {
    throw invalidParams(['author_id, author_username are mutually exclusive']);
  }
  if (input.assignee_id !== undefined && input.assignee_username !== undefined) {
    throw invalidParams(['assignee_id, assignee_username are mutually exclusive']);
  }
  let assignee: IssueFilters['assignee'];
  if (input.assignee_id !== undefined) {
    const a = special(input.assignee_id, (v) => (/^\d+$/.test(v.trim()) ? Number(v) : NaN));
    if ('value' in a && (!Number.isSafeInteger(a.value) || a.value > 2_147_483_647)) {
      throw invalidParams(['assignee_id should be an integer, none or any']);
    }
    assignee = a;
  }
  const scope = (input.scope ?? defaultScope).replace(/-/g, '_') as IssueFilters['scope'];
  const m = input.milestone ?? input.milestone_id;
  return {
    scope,
    state: input.state,
    labels: input.labels && input.labels.length > 0 ? labelsFilter(input.labels) : undefined,
    milestone: m !== undefined ? milestoneFilter(m) : undefined,
    authorId: input.author_id,
    authorUsername: input.author_username,
    assignee,
    assigneeUsernames: input.assignee_username,
    myReactionEmoji: input.my_reaction_emoji !== undefined ? special(input.my_reaction_emoji, (v) => v) : undefined,
    iids: input.iids,
    search: input.search,
    searchIn: input.in,
    createdAfter: input.created_after,
    createdBefore: input.created_before,
    updatedAfter: input.updated_after,
    updatedBefore: input.updated_before,
    confidential: input.confidential,
    issueTypes: input.issue_type !== undefined ? [input.issue_type] : undefined,
    dueDate: input.due_date,
    nonArchived: input.non_archived,
    not: input.not ? {
      labels: input.not.labels, milestone: input.not.milestone, authorId: input.not.author_id, authorUsername: input.not.author_username,
      assigneeId: input.not.assignee_id, assigneeUsername: input.not.assignee_username, myReactionEmoji: input.not.my_reaction_emoji,
      iids: input.not.iids,
    } : undefined,
  };
}
