/**
 * Deletes an application; its codes and tokens go with it (ON DELETE CASCADE). Returns the ids of
 * the tokens that were live, so the caller can drop them from the credential cache.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { deleteApplicationRow, liveTokenIdsOfApplication } from './oauth.queries.ts';

export async function deleteApplication(db: Kysely<DB>, applicationId: number): Promise<{ deleted: boolean; tokenIds: number[] }> {
  return db.transaction().execute(async (trx) => {
    const tokenIds = await liveTokenIdsOfApplication(trx, applicationId);
    const deleted = await deleteApplicationRow(trx, applicationId);
    return { deleted, tokenIds };
  });
}
