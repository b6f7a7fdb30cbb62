/** Every Kysely call for personal access, impersonation and OAuth access tokens, and sessions. */
import type { Kysely, Transaction } from 'kysely';
import type { DB, OauthAccessTokenRow, PersonalAccessTokenRow } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findPersonalAccessTokenByDigest(db: Db, tokenDigest: string): Promise<PersonalAccessTokenRow | undefined> {
  return db.selectFrom('personal_access_tokens').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

export function findOauthAccessTokenByDigest(db: Db, tokenDigest: string): Promise<(OauthAccessTokenRow & { application_uid: string | null }) | undefined> {
  return db.selectFrom('oauth_access_tokens')
    .leftJoin('oauth_applications', 'oauth_applications.id', 'oauth_access_tokens.application_id')
    .selectAll('oauth_access_tokens')
    .select('oauth_applications.uid as application_uid')
    .where('oauth_access_tokens.token_digest', '=', tokenDigest)
    .executeTakeFirst();
}

export function findSessionByDigest(db: Db, sessionDigest: string) {
  return db.selectFrom('sessions').select(['id', 'user_id', 'expires_at'])
    .where('session_digest', '=', sessionDigest).executeTakeFirst();
}

export interface NewPersonalAccessToken {
  userId: number;
  name: string;
  tokenDigest: string;
  scopes: string;
  impersonation: boolean;
  expiresAt: string | null;
}

export function insertPersonalAccessToken(db: Db, t: NewPersonalAccessToken): Promise<PersonalAccessTokenRow> {
  const now = nowIso();
  return db.insertInto('personal_access_tokens').values({
    user_id: t.userId, name: t.name, token_digest: t.tokenDigest, scopes: t.scopes,
    impersonation: t.impersonation ? 1 : 0, expires_at: t.expiresAt, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** Records use at most once a minute per token, to keep writes off the hot read path. */
export async function touchPersonalAccessToken(db: Db, id: number, now: Date = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - 60_000).toISOString();
  await db.updateTable('personal_access_tokens').set({ last_used_at: now.toISOString() })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', cutoff)]))
    .execute();
}
