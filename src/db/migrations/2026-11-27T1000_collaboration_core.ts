/**
 * The collaboration core (issue 29): labels, milestones, issues, notes, award emoji, events,
 * subscriptions, todos, boards, resource events, time logs and user agent details, as one model
 * shared by every noteable (issues now; merge requests, snippets and commits share notes, award
 * emoji, todos and events). Project snippets gain their project.
 *
 * Polymorphic rows name their target as the Service does: `<x>_type` is the Service's class name
 * ('Issue', 'MergeRequest', 'Snippet', 'Commit', 'Note', 'Milestone', 'Label', 'Project'), `<x>_id`
 * its row id (commits by `commit_id`, their sha). Every uniqueness rule is a unique index here, not
 * a read before the write:
 * - a label title once per project and once per group (partial unique indexes per owner column);
 * - a milestone title and iid once per project and once per group;
 * - an issue iid once per project (allocated by internal_ids, usage 'issues');
 * - an emoji name once per user per awardable; a subscription once per user per subscribable;
 * - a label once per target (label_links), a priority once per project label;
 * - an issue link once per (source, target) pair.
 * Authors' foreign keys cascade: deleting a user moves their contributions to the ghost user first
 * (src/domain/users/delete-user.ts), so only a hard delete removes them, as the Service does.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

const ts = (t: { addColumn: any }) => t.addColumn('created_at', 'text', (c: any) => c.notNull())
  .addColumn('updated_at', 'text', (c: any) => c.notNull());

export async function up(db: Kysely<any>): Promise<void> {
  // Labels: a project's or a group's (exactly one owner).
  await ts(withId(db, db.schema.createTable('labels'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addCheckConstraint('labels_one_owner', sql`(project_id is null) <> (group_id is null)`))
    .execute();
  await db.schema.createIndex('labels_project_title').on('labels').columns(['project_id', 'title']).unique()
    .where('project_id', 'is not', null).execute();
  await db.schema.createIndex('labels_group_title').on('labels').columns(['group_id', 'title']).unique()
    .where('group_id', 'is not', null).execute();

  await withId(db, db.schema.createTable('label_priorities'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('priority', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('label_priorities_project_label').on('label_priorities').columns(['project_id', 'label_id']).unique().execute();
  await db.schema.createIndex('label_priorities_label').on('label_priorities').columns(['label_id']).execute();

  // Which labels a target (an issue, later a merge request) carries.
  await ts(withId(db, db.schema.createTable('label_links'))
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('label_links_target_label').on('label_links').columns(['target_type', 'target_id', 'label_id']).unique().execute();
  // Filtering a list by label: the label's targets.
  await db.schema.createIndex('label_links_label_target').on('label_links').columns(['label_id', 'target_type', 'target_id']).execute();

  // Milestones: a project's or a group's, numbered per owner.
  await ts(withId(db, db.schema.createTable('milestones'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('due_date', 'text')
    .addColumn('start_date', 'text')
    .addCheckConstraint('milestones_one_owner', sql`(project_id is null) <> (group_id is null)`))
    .execute();
  for (const owner of ['project_id', 'group_id']) {
    await db.schema.createIndex(`milestones_${owner}_iid`).on('milestones').columns([owner, 'iid']).unique().where(owner, 'is not', null).execute();
    await db.schema.createIndex(`milestones_${owner}_title`).on('milestones').columns([owner, 'title']).unique().where(owner, 'is not', null).execute();
  }

  await withId(db, db.schema.createTable('issues'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // 'opened' | 'closed' (the Service's state_id 1 / 2).
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('issue_type', 'text', (c) => c.notNull().defaultTo('issue'))
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('due_date', 'text')
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('discussion_locked', 'integer')
    .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('relative_position', 'integer')
    .addColumn('closed_at', 'text')
    .addColumn('closed_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('updated_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('last_edited_at', 'text')
    .addColumn('last_edited_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('moved_to_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('duplicated_to_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issues_project_iid').on('issues').columns(['project_id', 'iid']).unique().execute();
  // A project's lists in their orders (created_at and updated_at, newest first, id breaking ties) and by state.
  await db.schema.createIndex('issues_project_state_created').on('issues').columns(['project_id', 'state', 'created_at', 'id']).execute();
  await db.schema.createIndex('issues_project_created').on('issues').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('issues_project_updated').on('issues').columns(['project_id', 'updated_at', 'id']).execute();
  await db.schema.createIndex('issues_author').on('issues').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('issues_milestone').on('issues').columns(['milestone_id']).execute();

  await db.schema.createTable('issue_assignees')
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('issue_assignees_pk', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_assignees_user').on('issue_assignees').columns(['user_id', 'issue_id']).execute();

  await ts(withId(db, db.schema.createTable('issue_links'))
    .addColumn('source_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('target_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    // 'relates_to' | 'blocks' ('is_blocked_by' is stored reversed, as the Service stores it).
    .addColumn('link_type', 'text', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('issue_links_source_target').on('issue_links').columns(['source_id', 'target_id']).unique().execute();
  await db.schema.createIndex('issue_links_target').on('issue_links').columns(['target_id']).execute();

  // Notes: comments and system notes on any noteable; a discussion is the notes sharing a discussion_id.
  await withId(db, db.schema.createTable('notes'))
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('noteable_type', 'text', (c) => c.notNull())
    .addColumn('noteable_id', 'integer')
    .addColumn('commit_id', 'text')
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    // What a system note records ('closed', 'reopened', 'label', 'milestone', 'assignee', 'title', …).
    .addColumn('system_action', 'text')
    .addColumn('internal', 'integer', (c) => c.notNull().defaultTo(0))
    // 'DiscussionNote' for a thread started as one, 'DiffNote' later; null for an individual note.
    .addColumn('type', 'text')
    .addColumn('discussion_id', 'text', (c) => c.notNull())
    .addColumn('resolvable', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('resolved_at', 'text')
    .addColumn('resolved_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('position', 'text')
    .addColumn('updated_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('last_edited_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notes_noteable').on('notes').columns(['noteable_type', 'noteable_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('notes_project_commit').on('notes').columns(['project_id', 'commit_id']).execute();
  await db.schema.createIndex('notes_discussion').on('notes').columns(['discussion_id']).execute();
  await db.schema.createIndex('notes_author').on('notes').columns(['author_id']).execute();

  await ts(withId(db, db.schema.createTable('award_emoji'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('awardable_type', 'text', (c) => c.notNull())
    .addColumn('awardable_id', 'integer', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('award_emoji_awardable_user_name').on('award_emoji')
    .columns(['awardable_type', 'awardable_id', 'user_id', 'name']).unique().execute();
  await db.schema.createIndex('award_emoji_user_name').on('award_emoji').columns(['user_id', 'name']).execute();

  // Events: what happened, for activity feeds. `action` is the Service's name ('created', 'pushed', …).
  await withId(db, db.schema.createTable('events'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_project').on('events').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('events_author').on('events').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('events_target').on('events').columns(['target_type', 'target_id']).execute();

  // A push event's details (the Service's push_event_payloads).
  await db.schema.createTable('push_event_payloads')
    .addColumn('event_id', 'integer', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
    .addColumn('commit_count', 'integer', (c) => c.notNull())
    // 'created' | 'removed' | 'pushed'
    .addColumn('action', 'text', (c) => c.notNull())
    // 'branch' | 'tag'
    .addColumn('ref_type', 'text', (c) => c.notNull())
    .addColumn('commit_from', 'text')
    .addColumn('commit_to', 'text')
    .addColumn('ref', 'text')
    .addColumn('commit_title', 'text')
    .addColumn('ref_count', 'integer')
    .execute();

  await ts(withId(db, db.schema.createTable('subscriptions'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subscribable_type', 'text', (c) => c.notNull())
    .addColumn('subscribable_id', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('subscribed', 'integer', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('subscriptions_subscribable_user').on('subscriptions')
    .columns(['subscribable_type', 'subscribable_id', 'user_id']).unique().execute();

  // Todos: `action` is the Service's number (1 assigned, 2 mentioned, 4 marked, 7 directly_addressed…).
  await ts(withId(db, db.schema.createTable('todos'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer')
    .addColumn('commit_id', 'text')
    .addColumn('note_id', 'integer', (c) => c.references('notes.id').onDelete('cascade'))
    .addColumn('action', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('todos_user_state').on('todos').columns(['user_id', 'state', 'id']).execute();
  await db.schema.createIndex('todos_target').on('todos').columns(['target_type', 'target_id']).execute();

  await ts(withId(db, db.schema.createTable('boards'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hide_backlog_list', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hide_closed_list', 'integer', (c) => c.notNull().defaultTo(0))
    .addCheckConstraint('boards_one_owner', sql`(project_id is null) <> (group_id is null)`))
    .execute();
  await db.schema.createIndex('boards_project').on('boards').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('boards_group').on('boards').columns(['group_id', 'id']).execute();

  // A board's lists: 'backlog' and 'closed' once each, a label list once per label.
  await ts(withId(db, db.schema.createTable('board_lists'))
    .addColumn('board_id', 'integer', (c) => c.notNull().references('boards.id').onDelete('cascade'))
    .addColumn('label_id', 'integer', (c) => c.references('labels.id').onDelete('cascade'))
    .addColumn('list_type', 'text', (c) => c.notNull())
    .addColumn('position', 'integer'))
    .execute();
  await db.schema.createIndex('board_lists_board_label').on('board_lists').columns(['board_id', 'label_id']).unique()
    .where('label_id', 'is not', null).execute();
  await db.schema.createIndex('board_lists_board_type').on('board_lists').columns(['board_id', 'list_type']).unique()
    .where('list_type', '<>', 'label').execute();

  // Resource events: the history of an issue's (later a merge request's) labels, milestone and state.
  await withId(db, db.schema.createTable('resource_label_events'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer')
    .addColumn('label_id', 'integer', (c) => c.references('labels.id').onDelete('set null'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    // 'add' | 'remove'
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('resource_milestone_events'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer')
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('action', 'text', (c) => c.notNull())
    // The milestone's state when the event happened.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('resource_state_events'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    // 'opened' | 'closed' | 'reopened' | 'merged' | 'locked'
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('source_commit', 'text')
    .addColumn('source_merge_request_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  for (const table of ['resource_label_events', 'resource_milestone_events', 'resource_state_events']) {
    await db.schema.createIndex(`${table}_issue`).on(table).columns(['issue_id', 'id']).execute();
    await db.schema.createIndex(`${table}_merge_request`).on(table).columns(['merge_request_id', 'id']).execute();
  }

  // Time spent on an issue (later a merge request), in seconds; negative entries subtract.
  await ts(withId(db, db.schema.createTable('timelogs'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('time_spent', 'integer', (c) => c.notNull())
    .addColumn('spent_at', 'text', (c) => c.notNull())
    .addColumn('summary', 'text'))
    .execute();
  await db.schema.createIndex('timelogs_issue').on('timelogs').columns(['issue_id']).execute();
  await db.schema.createIndex('timelogs_merge_request').on('timelogs').columns(['merge_request_id']).execute();

  // Who submitted an issue or snippet from where (administrators read it for spam reports).
  await withId(db, db.schema.createTable('user_agent_details'))
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('submitted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_agent_details_subject').on('user_agent_details').columns(['subject_type', 'subject_id']).unique().execute();

  // Project snippets: a snippet with a project belongs to it (personal snippets keep null).
  await db.schema.alterTable('snippets').addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade')).execute();
  await db.schema.createIndex('snippets_project').on('snippets').columns(['project_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('snippets_project').execute();
  await db.schema.alterTable('snippets').dropColumn('project_id').execute();
  for (const table of [
    'user_agent_details', 'timelogs', 'resource_state_events', 'resource_milestone_events', 'resource_label_events',
    'board_lists', 'boards', 'todos', 'subscriptions', 'push_event_payloads', 'events', 'award_emoji', 'notes',
    'issue_links', 'issue_assignees', 'issues', 'milestones', 'label_links', 'label_priorities', 'labels',
  ]) await db.schema.dropTable(table).execute();
}
