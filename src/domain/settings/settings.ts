/**
 * Reading and writing instance settings: every read goes through this process's cache of the
 * database handle (settings-cache.ts), with the defaults of catalogue.ts filled in; a write runs
 * in one transaction and then drops the cached snapshot here and on the other processes.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { defaultSettings, type SettingName, type Settings } from './catalogue.ts';
import { cacheOf } from './settings-cache.ts';
import { readStoredSettings, upsertSetting } from './settings.queries.ts';

/** The current settings: synchronously when this process has a fresh snapshot. */
export function currentSettings(db: Kysely<DB> | Transaction<DB>): Settings | Promise<Settings> {
  const cache = cacheOf(db);
  if (cache) return cache.current(() => readStoredSettings(db));
  return readStoredSettings(db).then((stored) => ({ ...defaultSettings(), ...stored }));
}

/** One setting's current value. */
export async function getSetting<N extends SettingName>(db: Kysely<DB> | Transaction<DB>, name: N): Promise<Settings[N]> {
  return (await currentSettings(db))[name];
}

/** Writes `values` in one transaction, then lets every process read them. */
export async function writeSettings(db: Kysely<DB>, values: Partial<Settings>): Promise<void> {
  const entries = Object.entries(values).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return;
  const now = nowIso();
  try {
    await db.transaction().execute(async (trx) => {
      for (const [name, value] of entries) await upsertSetting(trx, name, value, now);
    });
  } finally {
    // Also after a failure: a commit whose answer was lost may still have written.
    cacheOf(db)?.written();
  }
}

/** One setting (set-up code and tests). */
export async function setSetting<N extends SettingName>(db: Kysely<DB>, name: N, value: Settings[N]): Promise<void> {
  await writeSettings(db, { [name]: value } as Partial<Settings>);
}
