/**
 * Notification settings (the Service's app/models/notification_setting.rb and
 * NotificationRecipients): each user has a global level and may set another for a project or a
 * group; `custom` turns single events on or off. Other areas ask `notificationRecipients` who
 * should be told of an event (integration mail, issue and merge request notices).
 *
 * Levels (NotificationSetting.levels): disabled (nothing), participating (events they take part
 * in), watch (every event of the source but EXCLUDED_WATCHER_EVENTS), global (what the next
 * source up says: the project's group, its parent groups, then the global setting), mention
 * (only when mentioned), custom (participating plus the events switched on).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { NotificationLevel, NotificationSettingRow } from '../../db/tables/instance-administration.ts';
import {
  activeMemberIds, activeUserIds, findNotificationSetting, ownedEmails, saveNotificationSetting, settingsOfUsers, sourceSubscriberIds,
  type NotificationSource,
} from './notification-settings.queries.ts';

export type { NotificationSource };

export const NOTIFICATION_LEVELS = [
  'disabled', 'participating', 'watch', 'global', 'mention', 'custom',
] as const satisfies readonly NotificationLevel[];

/** NotificationSetting::EMAIL_EVENTS of the Service 15.2 (the custom level's switches). */
export const EMAIL_EVENTS = [
  'new_release', 'new_note', 'new_issue', 'reopen_issue', 'close_issue', 'reassign_issue', 'issue_due',
  'new_merge_request', 'push_to_merge_request', 'reopen_merge_request', 'close_merge_request', 'reassign_merge_request',
  'change_reviewer_merge_request', 'merge_merge_request', 'failed_pipeline', 'fixed_pipeline', 'success_pipeline',
  'moved_project', 'merge_when_pipeline_succeeds',
] as const;
export type EmailEvent = (typeof EMAIL_EVENTS)[number];

/** EXCLUDED_WATCHER_EVENTS: events a watcher is not sent unless they take part. */
const EXCLUDED_WATCHER_EVENTS: readonly EmailEvent[] = ['push_to_merge_request', 'issue_due', 'success_pipeline'];
/** failed_pipeline and fixed_pipeline read as on until switched off (NotificationSetting#failed_pipeline). */
const ON_UNLESS_SET: readonly EmailEvent[] = ['failed_pipeline', 'fixed_pipeline'];

/** User::DEFAULT_NOTIFICATION_LEVEL for the global setting; a source's setting defaults to global. */
const GLOBAL_DEFAULT: NotificationLevel = 'participating';

export interface NotificationSettingView {
  level: NotificationLevel;
  events: Record<EmailEvent, boolean>;
  notificationEmail: string | null;
}

function eventsOf(row: NotificationSettingRow | undefined): Record<EmailEvent, boolean> {
  const stored = row ? JSON.parse(row.events) as Partial<Record<EmailEvent, boolean>> : {};
  return Object.fromEntries(EMAIL_EVENTS.map((e) => [e, stored[e] ?? ON_UNLESS_SET.includes(e)])) as Record<EmailEvent, boolean>;
}

function view(row: NotificationSettingRow | undefined, source: NotificationSource): NotificationSettingView {
  return {
    level: row?.level ?? (source.kind === 'global' ? GLOBAL_DEFAULT : 'global'),
    events: eventsOf(row),
    notificationEmail: row?.notification_email ?? null,
  };
}

/** The user's setting for the source, its default when they never set one (read without writing). */
export async function notificationSettingFor(db: Kysely<DB>, userId: number, source: NotificationSource): Promise<NotificationSettingView> {
  return view(await findNotificationSetting(db, userId, source), source);
}

export interface NotificationSettingChange {
  level?: string;
  events?: Partial<Record<EmailEvent, boolean>>;
  /** Global setting only; '' clears it back to the primary email. */
  notificationEmail?: string;
}

export type ChangeResult = { ok: true; setting: NotificationSettingView } | { ok: false; error: 'level'; message: string }
  | { ok: false; error: 'validation'; errors: Record<string, string[]> };

export async function changeNotificationSetting(
  db: Kysely<DB>, userId: number, source: NotificationSource, change: NotificationSettingChange,
): Promise<ChangeResult> {
  // The enum assignment's ArgumentError, answered as 400 by the route.
  if (change.level !== undefined && !(NOTIFICATION_LEVELS as readonly string[]).includes(change.level)) {
    return { ok: false, error: 'level', message: `'${change.level}' is not a valid level` };
  }
  let email: string | null | undefined;
  if (change.notificationEmail !== undefined) {
    email = change.notificationEmail.trim() === '' ? null : change.notificationEmail;
    // User#notification_email must be one of the user's verified addresses.
    if (email !== null && !(await ownedEmails(db, userId)).some((e) => e.toLowerCase() === email!.toLowerCase())) {
      return { ok: false, error: 'validation', errors: { notification_email: ['is not an email you own'] } };
    }
  }
  return db.transaction().execute(async (trx) => {
    const existing = await findNotificationSetting(trx, userId, source);
    const current = view(existing, source);
    const stored = existing ? JSON.parse(existing.events) as Record<string, boolean> : {};
    const events = { ...stored, ...change.events };
    const row = await saveNotificationSetting(trx, userId, source, {
      level: (change.level as NotificationLevel | undefined) ?? current.level,
      events: JSON.stringify(events),
      ...(email !== undefined ? { notificationEmail: email } : {}),
    });
    return { ok: true as const, setting: view(row, source) };
  });
}

export interface RecipientQuery {
  event: EmailEvent;
  /** The project the event happened in (null for a group's own event). */
  projectId: number | null;
  /** The project's namespace lineage, nearest first, or the group's own lineage. */
  groupIds: number[];
  /** Users taking part: author, assignees, reviewers, commenters, subscribers. */
  participants?: number[];
  /** Users mentioned in the text. */
  mentioned?: number[];
  /** Users never told (the author of the action, usually). */
  exclude?: number[];
}

/**
 * Who should be told of `event` (a small NotificationRecipients::BuildService): every active user
 * among the members, participants, mentioned users and the source's watchers, by the level that
 * applies to them here: their project setting, else the nearest group's in `groupIds`, else
 * their global one (a `global` level passes to the next one up).
 */
export async function notificationRecipients(db: Kysely<DB>, q: RecipientQuery): Promise<number[]> {
  const participants = new Set(q.participants ?? []);
  const mentioned = new Set(q.mentioned ?? []);
  const [members, subscribers] = await Promise.all([
    activeMemberIds(db, q.projectId, q.groupIds),
    sourceSubscriberIds(db, q.projectId, q.groupIds),
  ]);
  const candidates = [...new Set([...members, ...subscribers, ...participants, ...mentioned])];
  const [active, settings] = await Promise.all([activeUserIds(db, candidates), settingsOfUsers(db, candidates, q.projectId, q.groupIds)]);
  const byUser = new Map<number, NotificationSettingRow[]>();
  for (const s of settings) byUser.set(s.user_id, [...(byUser.get(s.user_id) ?? []), s]);
  const memberSet = new Set(members);
  const excluded = new Set(q.exclude ?? []);
  const out: number[] = [];
  for (const userId of candidates) {
    if (!active.has(userId) || excluded.has(userId)) continue;
    const rows = byUser.get(userId) ?? [];
    const chain = [
      rows.find((r) => q.projectId !== null && r.project_id === q.projectId),
      ...q.groupIds.map((g) => rows.find((r) => r.group_id === g)),
    ];
    let setting = chain.find((r) => r !== undefined && r.level !== 'global');
    const global = rows.find((r) => r.project_id === null && r.group_id === null);
    if (!setting) setting = global;
    const level = setting?.level ?? GLOBAL_DEFAULT;
    const takesPart = participants.has(userId) || mentioned.has(userId);
    let told: boolean;
    switch (level) {
      case 'disabled': told = false; break;
      case 'mention': told = mentioned.has(userId); break;
      case 'watch':
        told = takesPart || ((memberSet.has(userId) || subscribers.includes(userId)) && !EXCLUDED_WATCHER_EVENTS.includes(q.event));
        break;
      case 'custom': told = takesPart || eventsOf(setting)[q.event]; break;
      default: told = takesPart;
    }
    if (told) out.push(userId);
  }
  return out.sort((a, b) => a - b);
}
