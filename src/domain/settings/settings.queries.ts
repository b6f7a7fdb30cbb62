/**
 * Instance settings in `application_settings`: one row per setting that was ever set, its value
 * JSON-encoded (catalogue.ts declares every setting with its type and default, so 200 settings
 * need no 200 columns). settings.ts reads them through the in-process cache and writes them.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {} from '../../db/tables/users.ts';
import { isSettingName, type Settings } from './catalogue.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The values stored, by setting; names that are not settings (the runner token's digest) are left out. */
export async function readStoredSettings(db: Db): Promise<Partial<Settings>> {
  const rows = await db.selectFrom('application_settings').select(['name', 'value']).execute();
  const out: Record<string, unknown> = {};
  for (const row of rows) if (isSettingName(row.name)) out[row.name] = JSON.parse(row.value);
  return out as Partial<Settings>;
}


export async function upsertSetting(trx: Db, name: string, value: unknown, now: string): Promise<void> {
  const encoded = JSON.stringify(value);
  await trx.insertInto('application_settings')
    .values({ name, value: encoded, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: encoded, updated_at: now }))
    .execute();
}
