/**
 * Starts a browser session after a successful authentication: records the sign-in (Devise
 * trackable, which also clears the failure counter) and stores the new session's digest. The raw
 * session secret goes only into the `_service_session` cookie.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { insertSession, recordSignIn } from './oauth.queries.ts';
import { currentSettings } from '../settings/settings.ts';

/** A session lasts session_expire_delay minutes (the Service's default is a week). */
export async function startSession(
  db: Kysely<DB>,
  userId: number,
  ip: string,
  now: Date = new Date(),
): Promise<{ rawSession: string; expiresAt: Date }> {
  const rawSession = generateHexToken();
  const expiresAt = new Date(now.getTime() + (await currentSettings(db)).session_expire_delay * 60_000);
  await db.transaction().execute(async (trx) => {
    await recordSignIn(trx, userId, ip, now.toISOString());
    await insertSession(trx, digest(rawSession), userId, expiresAt.toISOString());
  });
  return { rawSession, expiresAt };
}
