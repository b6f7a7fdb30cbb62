/**
 * Webhooks (the Service's web_hooks table, app/models/hooks/*): a project's hooks (`ProjectHook`,
 * cascading with their project) and the instance's system hooks (`SystemHook`, no project). The
 * secret token is sealed with the data directory's key, as the Service keeps it encrypted
 * (attr_encrypted :token): it must be sent back in a header, so a digest would not do. One flag
 * per event the hook hears; `push_events_branch_filter` a wildcard limiting push events to
 * matching branches.
 */
import type { CreateTableBuilder, Kysely } from 'kysely';
import { withId } from './_schema.ts';

const FLAGS_OFF = [
  'tag_push_events', 'issues_events', 'confidential_issues_events', 'merge_requests_events', 'note_events',
  'confidential_note_events', 'job_events', 'pipeline_events', 'wiki_page_events', 'deployment_events',
  'releases_events', 'repository_update_events',
];

export async function up(db: Kysely<any>): Promise<void> {
  let table: CreateTableBuilder<'web_hooks', string> = withId(db, db.schema.createTable('web_hooks'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('token_sealed', 'text')
    .addColumn('push_events', 'integer', (c) => c.notNull().defaultTo(1));
  for (const flag of FLAGS_OFF) table = table.addColumn(flag, 'integer', (c) => c.notNull().defaultTo(0));
  await table
    .addColumn('enable_ssl_verification', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('push_events_branch_filter', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A project's hooks in id order (its list, and the hooks an event of the project reaches).
  await db.schema.createIndex('web_hooks_project').on('web_hooks').columns(['project_id', 'id']).execute();
  // The system hooks in id order (GET /hooks, and the hooks of an instance event).
  await db.schema.createIndex('web_hooks_type').on('web_hooks').columns(['type', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('web_hooks').execute();
}
