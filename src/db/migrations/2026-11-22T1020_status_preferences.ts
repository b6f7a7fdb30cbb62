/**
 * User status, user preferences and spam logs (spec: User status, User preferences; Authentication,
 * "Spam handling"). user_follows already exists (foundation).
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // One status per user, as the Service keys user_statuses by user_id.
  await db.schema.createTable('user_statuses')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('emoji', 'text', (c) => c.notNull().defaultTo('speech_balloon'))
    .addColumn('message', 'text')
    .addColumn('availability', 'text', (c) => c.notNull().defaultTo('not_set'))
    .addColumn('clear_status_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The cleanup of expired statuses reads by clear_status_at.
  await db.schema.createIndex('user_statuses_clear_status_at').on('user_statuses').columns(['clear_status_at']).execute();

  await withId(db, db.schema.createTable('user_preferences'))
    .addColumn('user_id', 'integer', (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
    .addColumn('view_diffs_file_by_file', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('show_whitespace_in_diffs', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('spam_logs'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('source_ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('noteable_type', 'text', (c) => c.notNull())
    .addColumn('via_api', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('recaptcha_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('submitted_as_ham', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spam_logs_user').on('spam_logs').columns(['user_id', 'id']).execute();

  // GET /user/activities orders by last_activity_on with id as the tie-breaker for stable pages.
  await sql`create index users_last_activity_on_id on users (last_activity_on, id)`.execute(db);
  // Followers/following pages need no new index: user_follows' primary key (follower_id,
  // followee_id) and user_follows_followee (followee_id, follower_id) serve both orders.
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index users_last_activity_on_id`.execute(db);
  for (const t of ['spam_logs', 'user_preferences', 'user_statuses']) await db.schema.dropTable(t).execute();
}
