/**
 * Every webhook delivery attempt (the Service's web_hook_logs table: trigger, url, request headers
 * and data, response headers, body and status, execution duration, internal error message) and
 * the hooks' failure state for auto-disabling (web_hooks.recent_failures, backoff_count,
 * disabled_until, WebHook model 15.2). Logs are pruned by age, so `created_at` is indexed; a
 * hook's logs go with it.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('web_hook_logs'))
    .addColumn('web_hook_id', 'integer', (c) => c.notNull().references('web_hooks.id').onDelete('cascade'))
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('request_headers', 'text', (c) => c.notNull())
    .addColumn('request_data', 'text', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('response_status', 'text', (c) => c.notNull())
    .addColumn('execution_duration', 'real', (c) => c.notNull())
    .addColumn('internal_error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_hook_logs_hook').on('web_hook_logs').columns(['web_hook_id', 'created_at']).execute();
  await db.schema.createIndex('web_hook_logs_created').on('web_hook_logs').columns(['created_at']).execute();
  await db.schema.alterTable('web_hooks').addColumn('recent_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('web_hooks').addColumn('backoff_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('web_hooks').addColumn('disabled_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('web_hooks').dropColumn('disabled_until').execute();
  await db.schema.alterTable('web_hooks').dropColumn('backoff_count').execute();
  await db.schema.alterTable('web_hooks').dropColumn('recent_failures').execute();
  await db.schema.dropTable('web_hook_logs').execute();
}
