/**
 * Project integrations (the Service's integrations table, app/models/integration.rb): one row per
 * project and kind (`type`, unique with the project, as find_or_initialize_integration relies on),
 * whether it is active, the events it hears, its settings (`properties`, JSON text without
 * secrets) and its secret settings (API keys, passwords, tokens, webhook URLs) sealed with the
 * data directory's key: the integration must send them on, so a digest would not do (the Service
 * encrypts `properties` at rest).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

/** The event columns and their defaults (the Service's integrations columns). */
const EVENTS: [string, number][] = [
  ['push_events', 1], ['issues_events', 1], ['merge_requests_events', 1], ['tag_push_events', 1], ['note_events', 1],
  ['confidential_note_events', 1], ['commit_events', 1], ['confidential_issues_events', 1], ['pipeline_events', 0],
  ['wiki_page_events', 1], ['job_events', 0], ['comment_on_event_enabled', 1],
];

export async function up(db: Kysely<any>): Promise<void> {
  let table = withId(db, db.schema.createTable('integrations'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(0));
  for (const [name, on] of EVENTS) table = table.addColumn(name, 'integer', (c) => c.notNull().defaultTo(on));
  await table
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('secrets_sealed', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One integration of each kind per project; also the index of a project's list and of its active ones on a push.
  await db.schema.createIndex('integrations_project_type').on('integrations').columns(['project_id', 'type']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('integrations').execute();
}
