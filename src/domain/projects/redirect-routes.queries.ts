/**
 * Every Kysely call about redirect routes (the Service's RedirectRoute): a project's old full
 * paths. Route#create_redirect keeps the old path when a project's path changes with its namespace;
 * Route#delete_conflicting_redirects drops a redirect from the path a project now lives at.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The project an old full path redirects to (redirect_routes_path_lower). */
export async function redirectedProjectId(db: Db, fullPath: string): Promise<number | undefined> {
  const row = await db.selectFrom('redirect_routes').select('project_id')
    .where(sql`lower(path)`, '=', fullPath.toLowerCase()).executeTakeFirst();
  return row?.project_id;
}

/**
 * A project moved from `oldPath` to `newPath`: the old path redirects to it (taking over a
 * redirect another project left there), the new one no longer redirects anywhere.
 */
export async function recordMove(trx: Transaction<DB>, projectId: number, oldPath: string, newPath: string): Promise<void> {
  await trx.deleteFrom('redirect_routes')
    .where((eb) => eb.or([eb(sql`lower(path)`, '=', newPath.toLowerCase()), eb(sql`lower(path)`, '=', oldPath.toLowerCase())]))
    .execute();
  if (oldPath.toLowerCase() === newPath.toLowerCase()) return;
  await trx.insertInto('redirect_routes').values({ project_id: projectId, path: oldPath, created_at: nowIso() }).execute();
}
