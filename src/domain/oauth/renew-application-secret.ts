/** A new client secret for an application; the old one stops working at once. Shown once. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { updateApplicationSecret } from './oauth.queries.ts';

export async function renewApplicationSecret(db: Kysely<DB>, applicationId: number): Promise<string> {
  const secret = generateHexToken();
  await updateApplicationSecret(db, applicationId, digest(secret));
  return secret;
}
