/**
 * Instance settings: one row per setting name in `application_settings`, the value JSON-encoded,
 * and a default for every known setting so an unset name reads as its default. Generic on
 * purpose: the /application/settings resource builds on these functions.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Every known setting with its default value. */
export const SETTING_DEFAULTS = {
  /** New users (POST /users) start in blocked_pending_approval until an administrator approves them. */
  require_admin_approval_after_user_signup: false as boolean,
  /** Shard name → weight 0–100 for new repositories (read by repositories/storage.ts pickStorage). */
  repository_storages_weighted: { default: 100 } as Record<string, number>,
  /** Searches a minute per signed-in user (the Service's default 30; `user_email_lookup_limit` is its deprecated alias). */
  search_rate_limit: 30 as number,
  /** Searches a minute per IP address for anonymous callers (the Service's default 10). */
  search_rate_limit_unauthenticated: 10 as number,
};

export type SettingName = keyof typeof SETTING_DEFAULTS;
export type SettingValue<N extends SettingName> = (typeof SETTING_DEFAULTS)[N];

export async function getSetting<N extends SettingName>(db: Db, name: N): Promise<SettingValue<N>> {
  const row = await db.selectFrom('application_settings').select('value').where('name', '=', name).executeTakeFirst();
  return row ? JSON.parse(row.value) as SettingValue<N> : SETTING_DEFAULTS[name];
}

/** All settings, defaults filled in for the unset ones. */
export async function getAllSettings(db: Db): Promise<typeof SETTING_DEFAULTS> {
  const rows = await db.selectFrom('application_settings').select(['name', 'value']).execute();
  const out: Record<string, unknown> = { ...SETTING_DEFAULTS };
  for (const row of rows) if (Object.hasOwn(SETTING_DEFAULTS, row.name)) out[row.name] = JSON.parse(row.value);
  return out as typeof SETTING_DEFAULTS;
}

export async function setSetting<N extends SettingName>(db: Db, name: N, value: SettingValue<N>): Promise<void> {
  const encoded = JSON.stringify(value);
  const now = nowIso();
  await db.insertInto('application_settings')
    .values({ name, value: encoded, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: encoded, updated_at: now }))
    .execute();
}
