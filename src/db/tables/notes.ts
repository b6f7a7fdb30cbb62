/**
 * What every noteable shares (migration 2026-11-27T1000_collaboration_core): notes, award emoji,
 * subscriptions, todos, events and boards. Polymorphic targets are named by the Service's class
 * name ('Issue', 'MergeRequest', 'Snippet', 'Commit', 'Note', …) and row id (commits by sha).
 */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface NotesTable {
  id: Generated<number>;
  note: string;
  noteable_type: string;
  /** Null for a commit's notes (see commit_id). */
  noteable_id: number | null;
  commit_id: string | null;
  /** Null for a personal snippet's notes. */
  project_id: number | null;
  author_id: number;
  system: Generated<Flag>;
  /** What a system note records: 'closed', 'reopened', 'label', 'milestone', 'assignee', 'title', … */
  system_action: string | null;
  internal: Generated<Flag>;
  /** 'DiscussionNote' | 'DiffNote' | null (an individual note). */
  type: string | null;
  /** 40 hex characters, shared by the notes of one thread. */
  discussion_id: string;
  resolvable: Generated<Flag>;
  resolved_at: string | null;
  resolved_by_id: number | null;
  /** JSON of a diff note's position. */
  position: string | null;
  updated_by_id: number | null;
  last_edited_at: string | null;
  created_at: string;
  updated_at: string;
}
export type NoteRow = Selectable<NotesTable>;

export interface AwardEmojiTable {
  id: Generated<number>;
  name: string;
  user_id: number;
  /** 'Issue' | 'MergeRequest' | 'Snippet' | 'Note'. */
  awardable_type: string;
  awardable_id: number;
  created_at: string;
  updated_at: string;
}

export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  /** 'Issue' | 'MergeRequest' | 'Label' | 'Snippet'. */
  subscribable_type: string;
  subscribable_id: number;
  project_id: number | null;
  /** 1 subscribed, 0 explicitly unsubscribed (overrides participation). */
  subscribed: Flag;
  created_at: string;
  updated_at: string;
}

export interface TodosTable {
  id: Generated<number>;
  user_id: number;
  author_id: number;
  project_id: number | null;
  group_id: number | null;
  target_type: string;
  target_id: number | null;
  commit_id: string | null;
  note_id: number | null;
  /** The Service's Todo action: 1 assigned, 2 mentioned, 3 build_failed, 4 marked, 5 approval_required,
   * 6 unmergeable, 7 directly_addressed, 9 review_requested. */
  action: number;
  /** 'pending' | 'done'. */
  state: string;
  created_at: string;
  updated_at: string;
}

export interface EventsTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  author_id: number;
  /** The Service's action name: 'created', 'updated', 'closed', 'reopened', 'pushed', 'commented',
   * 'merged', 'joined', 'left', 'destroyed', 'expired', 'approved'. */
  action: string;
  target_type: string | null;
  target_id: number | null;
  created_at: string;
  updated_at: string;
}
export type EventRow = Selectable<EventsTable>;

export interface PushEventPayloadsTable {
  event_id: number;
  commit_count: number;
  /** 'created' | 'removed' | 'pushed'. */
  action: string;
  /** 'branch' | 'tag'. */
  ref_type: string;
  commit_from: string | null;
  commit_to: string | null;
  ref: string | null;
  commit_title: string | null;
  ref_count: number | null;
}

export interface BoardsTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  name: string;
  hide_backlog_list: Generated<Flag>;
  hide_closed_list: Generated<Flag>;
  created_at: string;
  updated_at: string;
}

export interface BoardListsTable {
  id: Generated<number>;
  board_id: number;
  label_id: number | null;
  /** 'backlog' | 'label' | 'closed'. */
  list_type: string;
  position: number | null;
  created_at: string;
  updated_at: string;
}

declare module '../types.ts' {
  interface DB {
    notes: NotesTable;
    award_emoji: AwardEmojiTable;
    subscriptions: SubscriptionsTable;
    todos: TodosTable;
    events: EventsTable;
    push_event_payloads: PushEventPayloadsTable;
    boards: BoardsTable;
    board_lists: BoardListsTable;
  }
}
