/**
 * Instance administration (issue 32, item 8): broadcast messages, custom attributes of projects
 * and groups (beside users' own user_custom_attributes), notification settings per user and
 * source, and the gates of kiln's feature flags.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // The Service's BroadcastMessage: target_access_levels space-separated, broadcast_type its
  // enum's name (banner, notification), dismissable null until set.
  await withId(db, db.schema.createTable('broadcast_messages'))
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('color', 'text')
    .addColumn('font', 'text')
    .addColumn('target_access_levels', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('target_path', 'text')
    .addColumn('broadcast_type', 'text', (c) => c.notNull())
    .addColumn('dismissable', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  for (const [table, owner, target] of [
    ['project_custom_attributes', 'project_id', 'projects.id'],
    ['group_custom_attributes', 'group_id', 'namespaces.id'],
  ] as const) {
    await withId(db, db.schema.createTable(table))
      .addColumn(owner, 'integer', (c) => c.notNull().references(target).onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // One value per key and holder (the Service's unique index on [holder, key]); the key/value
    // pair for the `custom_attributes[key]=value` filter of /projects and /groups.
    await db.schema.createIndex(`${table}_owner_key`).on(table).columns([owner, 'key']).unique().execute();
    await db.schema.createIndex(`${table}_key_value`).on(table).columns(['key', 'value', owner]).execute();
  }

  // NotificationSetting: one row per user and source (a project, a group, or neither for the
  // global setting); `events` the custom events set to true or false as JSON; the global row
  // also keeps the user's notification email (the Service's users.notification_email).
  await withId(db, db.schema.createTable('notification_settings'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('notification_email', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // "already exists in source": one setting per user and source, the global one included.
  await db.schema.createIndex('notification_settings_user_source').on('notification_settings').unique()
    .expression(sql`user_id, coalesce(project_id, 0), coalesce(group_id, 0)`).execute();
  // The recipients of a project's or group's events.
  await db.schema.createIndex('notification_settings_project').on('notification_settings').columns(['project_id', 'level']).execute();
  await db.schema.createIndex('notification_settings_group').on('notification_settings').columns(['group_id', 'level']).execute();

  // The gates of a feature flag (the Service keeps Flipper's feature_gates): `boolean` true or
  // false, `percentage_of_time` / `percentage_of_actors` 0–100, `actors` one row per actor
  // ("User:1", "Project:2", "Group:3").
  await withId(db, db.schema.createTable('feature_gates'))
    .addColumn('feature_key', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feature_gates_feature_key_value').on('feature_gates').columns(['feature_key', 'key', 'value']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['feature_gates', 'notification_settings', 'group_custom_attributes', 'project_custom_attributes', 'broadcast_messages']) {
    await db.schema.dropTable(t).execute();
  }
}
