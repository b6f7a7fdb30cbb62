/**
 * Chat integrations hear deployments too (the Service's integrations.deployment_events column,
 * off unless set, as BaseChatNotification's supported deployment event of Slack and Mattermost).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').addColumn('deployment_events', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').dropColumn('deployment_events').execute();
}
