/** Instance-wide secrets kept in the database, so every server process shares them. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

export async function readSecret(db: Kysely<DB>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('app_secrets').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/** Returns the stored secret, storing `fresh` first when none exists; safe when several processes race. */
export async function readOrCreateSecret(db: Kysely<DB>, name: string, fresh: () => string): Promise<string> {
  const existing = await readSecret(db, name);
  if (existing !== undefined) return existing;
  await db.insertInto('app_secrets').values({ name, value: fresh(), created_at: nowIso() })
    .onConflict((oc) => oc.column('name').doNothing()).execute();
  const stored = await readSecret(db, name);
  if (stored === undefined) throw new Error(`secret ${name} could not be stored`);
  return stored;
}
