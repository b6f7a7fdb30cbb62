/**
 * Starts a browser session after a successful authentication: records the sign-in (Devise
 * trackable, which also clears the failure counter) and stores the new session's digest. The raw
 * session secret goes only into the `_service_session` cookie.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { insertSession, recordSignIn } from './oauth.queries.ts';
import { SESSION_TTL_MS } from './policy.ts';

export async function startSession(db: Kysely<DB>, userId: number, ip: string, now: Date = new Date()): Promise<{ rawSession: string; expiresAt: Date }> {
  const rawSession = generateHexToken();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db.transaction().execute(async (trx) => {
    await recordSignIn(trx, userId, ip, now.toISOString());
    await insertSession(trx, digest(rawSession), userId, expiresAt.toISOString());
  });
  return { rawSession, expiresAt };
}
