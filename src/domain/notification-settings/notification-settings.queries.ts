/** Every Kysely call of the notification settings area. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { NotificationLevel, NotificationSettingRow } from '../../db/tables/instance-administration.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A setting's source: a project, a group, or neither (the user's global setting). */
export type NotificationSource = { kind: 'global' } | { kind: 'project'; id: number } | { kind: 'group'; id: number };

function bySource<QB extends { where: (...a: any[]) => QB }>(qb: QB, source: NotificationSource): QB {
  const projectId = source.kind === 'project' ? source.id : null;
  const groupId = source.kind === 'group' ? source.id : null;
  return qb.where('project_id', projectId === null ? 'is' : '=', projectId).where('group_id', groupId === null ? 'is' : '=', groupId);
}

export function findNotificationSetting(db: Db, userId: number, source: NotificationSource): Promise<NotificationSettingRow | undefined> {
  return bySource(db.selectFrom('notification_settings').selectAll().where('user_id', '=', userId), source).executeTakeFirst();
}

/**
 * Writes the user's setting for the source in one statement: the unique expression index
 * notification_settings_user_source decides between insert and update.
 */
export async function saveNotificationSetting(db: Db, userId: number, source: NotificationSource, values: {
  level: NotificationLevel; events: string; notificationEmail?: string | null;
}): Promise<NotificationSettingRow> {
  const now = nowIso();
  const existing = await findNotificationSetting(db, userId, source);
  const email = values.notificationEmail !== undefined ? { notification_email: values.notificationEmail } : {};
  if (existing) {
    return db.updateTable('notification_settings').set({ level: values.level, events: values.events, ...email, updated_at: now })
      .where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow();
  }
  return db.insertInto('notification_settings').values({
    user_id: userId, project_id: source.kind === 'project' ? source.id : null, group_id: source.kind === 'group' ? source.id : null,
    level: values.level, events: values.events, notification_email: values.notificationEmail ?? null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** Every setting of these users for the project, the groups of its lineage and globally (for notificationRecipients). */
export function settingsOfUsers(
  db: Db, userIds: number[], projectId: number | null, groupIds: number[],
): Promise<NotificationSettingRow[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('notification_settings').selectAll().where('user_id', 'in', userIds).where((eb) => eb.or([
    eb.and([eb('project_id', 'is', null), eb('group_id', 'is', null)]),
    ...(projectId !== null ? [eb('project_id', '=', projectId)] : []),
    ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : []),
  ])).execute();
}

/** Users who set watch or custom on the project or one of its groups (index notification_settings_project / _group). */
export async function sourceSubscriberIds(db: Db, projectId: number | null, groupIds: number[]): Promise<number[]> {
  const rows = await db.selectFrom('notification_settings').select('user_id')
    .where('level', 'in', ['watch', 'custom']).where((eb) => eb.or([
    ...(projectId !== null ? [eb('project_id', '=', projectId)] : []),
    ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : []),
    ...(projectId === null && groupIds.length === 0 ? [eb('id', '=', 0)] : []),
  ])).execute();
  return [...new Set(rows.map((r) => r.user_id))];
}

/** The members of the project and its groups who are active users. */
export async function activeMemberIds(db: Db, projectId: number | null, groupIds: number[]): Promise<number[]> {
  if (projectId === null && groupIds.length === 0) return [];
  const rows = await db.selectFrom('members').innerJoin('users', 'users.id', 'members.user_id').select('members.user_id')
    .where('users.state', '=', 'active').where((eb) => eb.or([
      ...(projectId !== null ? [eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', projectId)])] : []),
      ...(groupIds.length ? [eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', groupIds)])] : []),
    ])).execute();
  return [...new Set(rows.map((r) => r.user_id))];
}

export async function activeUserIds(db: Db, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('id', 'in', ids).where('state', '=', 'active').execute();
  return new Set(rows.map((r) => r.id));
}

/** The user's primary email and confirmed secondary ones: what a notification email may be. */
export async function ownedEmails(db: Db, userId: number): Promise<string[]> {
  const [user, emails] = await Promise.all([
    db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst(),
    db.selectFrom('emails').select('email').where('user_id', '=', userId).where('confirmed_at', 'is not', null).execute(),
  ]);
  return [...(user ? [user.email] : []), ...emails.map((e) => e.email)];
}
