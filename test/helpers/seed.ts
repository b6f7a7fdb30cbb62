/** Many rows at once, for tests about large tables (the 10,000 count cap). */
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/types.ts';
import { nowIso } from '../../src/domain/clock.ts';

/**
 * Inserts `count` bare users named `<prefix>00001`… in multi-row INSERTs of 1,000 (well under
 * both engines' bound-parameter limits). No namespaces: these rows exist to be listed and counted.
 */
export async function insertUsersBulk(db: Kysely<DB>, prefix: string, count: number, start = 1): Promise<void> {
  const now = nowIso();
  for (let from = start; from < start + count; from += 1000) {
    const rows = [];
    for (let i = from; i < Math.min(from + 1000, start + count); i++) {
      const name = `${prefix}${String(i).padStart(5, '0')}`;
      rows.push({ username: name, email: `${name}@bulk.example`, name, created_at: now, updated_at: now });
    }
    await db.insertInto('users').values(rows).execute();
  }
}
