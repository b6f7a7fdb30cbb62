/** Every Kysely call of the integrations area. */
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IntegrationRow, IntegrationsTable } from '../../db/tables/integrations.ts';
import { nowIso } from '../clock.ts';
import type { EventFlag } from './catalog.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type IntegrationWrite = Omit<Updateable<IntegrationsTable>, 'id' | 'project_id' | 'type' | 'created_at' | 'updated_at'>;

/** A project's active integrations in id order. */
export function activeIntegrationsQuery(db: Db, projectId: number) {
  return db.selectFrom('integrations').selectAll().where('project_id', '=', projectId).where('active', '=', 1).orderBy('id');
}

export async function activeIntegrations(db: Db, projectId: number): Promise<IntegrationRow[]> {
  return activeIntegrationsQuery(db, projectId).execute();
}

export async function findIntegration(db: Db, projectId: number, type: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('project_id', '=', projectId).where('type', '=', type).executeTakeFirst();
}

export async function findIntegrationById(db: Db, id: number): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Creates or changes a project's integration of one kind in one statement: the unique
 * (project_id, type) index decides, so two saves at once never make two rows.
 */
export async function upsertIntegration(db: Db, projectId: number, type: string, values: IntegrationWrite): Promise<IntegrationRow> {
  const now = nowIso();
  return db.insertInto('integrations')
    .values({ ...values, project_id: projectId, type, created_at: now, updated_at: now } as never)
    .onConflict((oc) => oc.columns(['project_id', 'type']).doUpdateSet({ ...values, updated_at: now } as never))
    .returningAll().executeTakeFirstOrThrow();
}

/** Whether an active integration of the project hears one of `flags` (a job is worth queueing). */
export async function integrationHearsAny(db: Db, projectId: number, flags: EventFlag[]): Promise<boolean> {
  if (flags.length === 0) return false;
  const row = await db.selectFrom('integrations').select('id').where('project_id', '=', projectId).where('active', '=', 1)
    .where((eb) => eb.or(flags.map((f) => eb(f, '=', 1)))).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The user a commit's author or committer address belongs to (the Service's
 * User.find_by_any_email with confirmed: true): a primary address, or a confirmed secondary one.
 */
export async function userByCommitEmail(db: Db, email: string): Promise<{ name: string; username: string } | undefined> {
  if (email === '') return undefined;
  const primary = await db.selectFrom('users').select(['name', 'username'])
    .where(sql<string>`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
  if (primary) return primary;
  return db.selectFrom('emails').innerJoin('users', 'users.id', 'emails.user_id').select(['users.name', 'users.username'])
    .where(sql<string>`lower(emails.email)`, '=', email.toLowerCase()).where('emails.confirmed_at', 'is not', null).executeTakeFirst();
}
