/**
 * Deletes an application; its codes and tokens go with it (ON DELETE CASCADE). The tokens that
 * were live are announced as deleted credentials once the deletion commits, so they stop working
 * on the next request (domain/auth/credential-events.ts). Answers whether the application existed.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { announceCredentialEvents, tokenRevoked } from '../auth/credential-events.ts';
import { deleteApplicationRow, liveTokenIdsOfApplication } from './oauth.queries.ts';

export async function deleteApplication(db: Kysely<DB>, applicationId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const tokenIds = await liveTokenIdsOfApplication(trx, applicationId);
    const deleted = await deleteApplicationRow(trx, applicationId);
    await announceCredentialEvents(trx, tokenIds.map((id) => tokenRevoked('oauth_token', id, 'deleted')));
    return deleted;
  });
}
