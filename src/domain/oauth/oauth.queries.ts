/**
 * Every Kysely call of the OAuth provider: applications, authorization codes (access grants),
 * access/refresh tokens. Small functions taking (db | trx, …); secrets arrive here as digests only.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, OauthAccessTokenRow, OauthApplicationRow } from '../../db/types.ts';
import type { OauthAccessGrantRow } from '../../db/tables/oauth.ts';
import { nowIso } from '../clock.ts';
import { announceCredentialEvents, tokenRevoked } from '../auth/credential-events.ts';
import { isStorableText } from '../../db/constraints.ts';

type Db = Kysely<DB> | Transaction<DB>;

// ---- applications -------------------------------------------------------------------------

export interface NewApplication {
  name: string;
  uid: string;
  secretDigest: string;
  redirectUri: string;
  scopes: string;
  confidential: boolean;
  ownerId: number | null;
}

export function insertApplication(db: Db, a: NewApplication): Promise<OauthApplicationRow> {
  const now = nowIso();
  return db.insertInto('oauth_applications').values({
    name: a.name, uid: a.uid, secret_digest: a.secretDigest, redirect_uri: a.redirectUri, scopes: a.scopes,
    confidential: a.confidential ? 1 : 0, owner_id: a.ownerId, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** A client_id as a client sends it: text no uid can be (uids are 64 hex digits) names no application. */
export function findApplicationByUid(db: Db, uid: string): Promise<OauthApplicationRow | undefined> {
  if (uid.length > 255 || !isStorableText(uid)) return Promise.resolve(undefined);
  return db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirst();
}

export function findApplicationById(db: Db, id: number): Promise<OauthApplicationRow | undefined> {
  return db.selectFrom('oauth_applications').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Instance-wide applications (no owner): the ones the /applications API manages. */
export function listInstanceApplications(db: Db): Promise<OauthApplicationRow[]> {
  return db.selectFrom('oauth_applications').selectAll().where('owner_id', 'is', null).orderBy('id').execute();
}

export function listApplicationsOwnedBy(db: Db, ownerId: number): Promise<OauthApplicationRow[]> {
  return db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
}

export async function deleteApplicationRow(db: Db, id: number): Promise<boolean> {
  const res = await db.deleteFrom('oauth_applications').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function updateApplicationSecret(db: Db, id: number, secretDigest: string): Promise<void> {
  await db.updateTable('oauth_applications').set({ secret_digest: secretDigest, updated_at: nowIso() }).where('id', '=', id).execute();
}

/** Ids of the tokens an application holds that are still live, to drop them from the auth cache. */
export async function liveTokenIdsOfApplication(db: Db, applicationId: number): Promise<number[]> {
  const rows = await db.selectFrom('oauth_access_tokens').select('id')
    .where('application_id', '=', applicationId).where('revoked_at', 'is', null).execute();
  return rows.map((r) => r.id);
}

// ---- authorization codes ------------------------------------------------------------------

export interface NewGrant {
  applicationId: number;
  resourceOwnerId: number;
  codeDigest: string;
  redirectUri: string;
  scopes: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  nonce: string | null;
  expiresIn: number;
}

export async function insertGrant(db: Db, g: NewGrant): Promise<void> {
  await db.insertInto('oauth_access_grants').values({
    application_id: g.applicationId, resource_owner_id: g.resourceOwnerId, code_digest: g.codeDigest,
    redirect_uri: g.redirectUri, scopes: g.scopes, code_challenge: g.codeChallenge,
    code_challenge_method: g.codeChallengeMethod, nonce: g.nonce, expires_in: g.expiresIn, created_at: nowIso(),
  }).execute();
}

export function findGrantByCodeDigest(db: Db, codeDigest: string): Promise<OauthAccessGrantRow | undefined> {
  return db.selectFrom('oauth_access_grants').selectAll().where('code_digest', '=', codeDigest).executeTakeFirst();
}

/** Marks a code used; false when another request used it first (the update is the lock). */
/** The redirect URI of the authorization request a grant came from. */
export async function grantRedirectUri(db: Db, id: number): Promise<string | undefined> {
  const row = await db.selectFrom('oauth_access_grants').select('redirect_uri').where('id', '=', id).executeTakeFirst();
  return row?.redirect_uri;
}

export async function consumeGrant(db: Db, id: number): Promise<boolean> {
  const res = await db.updateTable('oauth_access_grants').set({ revoked_at: nowIso() })
    .where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

// ---- access and refresh tokens ------------------------------------------------------------

export interface NewAccessToken {
  applicationId: number | null;
  resourceOwnerId: number;
  tokenDigest: string;
  refreshTokenDigest: string | null;
  previousRefreshTokenDigest: string | null;
  scopes: string;
  expiresIn: number;
  grantId: number | null;
  createdAt: string;
}

export function insertAccessToken(db: Db, t: NewAccessToken): Promise<OauthAccessTokenRow> {
  return db.insertInto('oauth_access_tokens').values({
    application_id: t.applicationId, resource_owner_id: t.resourceOwnerId, token_digest: t.tokenDigest,
    refresh_token_digest: t.refreshTokenDigest, previous_refresh_token_digest: t.previousRefreshTokenDigest,
    scopes: t.scopes, expires_in: t.expiresIn, grant_id: t.grantId, created_at: t.createdAt,
  }).returningAll().executeTakeFirstOrThrow();
}

export type AccessTokenWithApp = OauthAccessTokenRow & { application_uid: string | null; application_confidential: number | null };

function tokensWithApp(db: Db) {
  return db.selectFrom('oauth_access_tokens')
    .leftJoin('oauth_applications', 'oauth_applications.id', 'oauth_access_tokens.application_id')
    .selectAll('oauth_access_tokens')
    .select(['oauth_applications.uid as application_uid', 'oauth_applications.confidential as application_confidential']);
}

export function findAccessTokenByDigest(db: Db, tokenDigest: string): Promise<AccessTokenWithApp | undefined> {
  return tokensWithApp(db).where('oauth_access_tokens.token_digest', '=', tokenDigest).executeTakeFirst();
}

export function findAccessTokenByRefreshDigest(db: Db, refreshDigest: string): Promise<AccessTokenWithApp | undefined> {
  return tokensWithApp(db).where('oauth_access_tokens.refresh_token_digest', '=', refreshDigest).executeTakeFirst();
}

/** The token that replaced the one holding `refreshDigest` at its rotation. */
export function findSuccessorByPreviousRefreshDigest(db: Db, refreshDigest: string): Promise<OauthAccessTokenRow | undefined> {
  return db.selectFrom('oauth_access_tokens').selectAll()
    .where('previous_refresh_token_digest', '=', refreshDigest).executeTakeFirst();
}

/**
 * Revokes a token row (access and refresh together); false when it was already revoked. Each
 * revocation is announced as a credential event once committed (domain/auth/credential-events.ts).
 */
export async function revokeAccessTokenRow(db: Db, id: number, at: string = nowIso()): Promise<boolean> {
  const res = await db.updateTable('oauth_access_tokens').set({ revoked_at: at })
    .where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  const revoked = Number(res.numUpdatedRows) === 1;
  if (revoked) await announceCredentialEvents(db, [tokenRevoked('oauth_token', id)]);
  return revoked;
}

/** Revokes every live token issued from one authorization code. */
export async function revokeTokensOfGrant(db: Db, grantId: number): Promise<void> {
  const rows = await db.updateTable('oauth_access_tokens').set({ revoked_at: nowIso() })
    .where('grant_id', '=', grantId).where('revoked_at', 'is', null).returning('id').execute();
  await announceCredentialEvents(db, rows.map((r) => tokenRevoked('oauth_token', r.id)));
}

// ---- users (sign-in and the password grant) -----------------------------------------------

/** `User.find_by_login`: username or primary email, case-insensitively. */
/** A username or email (both varchar(255)); longer text or text no column holds names nobody. */
export function findUserByLogin(db: Db, login: string) {
  if (login.length > 255 || !isStorableText(login)) return Promise.resolve(undefined);
  const lower = login.toLowerCase();
  return db.selectFrom('users').selectAll()
    .where((eb) => eb.or([eb(sql`lower(username)`, '=', lower), eb(sql`lower(email)`, '=', lower)]))
    .orderBy('id').executeTakeFirst();
}

export async function recordFailedAttempt(db: Db, userId: number, lockAt: number, now: string): Promise<void> {
  // One statement, so concurrent failures cannot lose an increment.
  await db.updateTable('users').set((eb) => ({
    failed_attempts: eb('failed_attempts', '+', 1),
    locked_at: sql<string | null>`case when locked_at is null and failed_attempts + 1 >= ${lockAt} then ${now} else locked_at end`,
  })).where('id', '=', userId).execute();
}

export async function unlockUser(db: Db, userId: number): Promise<void> {
  await db.updateTable('users').set({ failed_attempts: 0, locked_at: null }).where('id', '=', userId).execute();
}

export async function recordSignIn(db: Db, userId: number, ip: string, now: string): Promise<void> {
  await db.updateTable('users').set((eb) => ({
    failed_attempts: 0,
    locked_at: null,
    sign_in_count: eb('sign_in_count', '+', 1),
    last_sign_in_at: eb.ref('current_sign_in_at'),
    last_sign_in_ip: eb.ref('current_sign_in_ip'),
    current_sign_in_at: now,
    current_sign_in_ip: ip,
  })).where('id', '=', userId).execute();
}

// ---- browser sessions ---------------------------------------------------------------------

export async function insertSession(db: Db, sessionDigest: string, userId: number, expiresAt: string): Promise<void> {
  await db.insertInto('sessions').values({
    session_digest: sessionDigest,
    user_id: userId,
    created_at: nowIso(),
    expires_at: expiresAt,
  }).execute();
}

export function findLiveSession(db: Db, sessionDigest: string, now: string) {
  return db.selectFrom('sessions').select(['id', 'user_id', 'expires_at'])
    .where('session_digest', '=', sessionDigest).where('expires_at', '>', now).executeTakeFirst();
}

/** Signs a session out; announced, so that its cookie stops working on the next request. */
export async function deleteSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
  await announceCredentialEvents(db, [tokenRevoked('session', id, 'deleted')]);
}
