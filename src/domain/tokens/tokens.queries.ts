/** Every Kysely call for personal access, impersonation and OAuth access tokens, and sessions. */
import type { Kysely, Transaction } from 'kysely';
import type { DB, OauthAccessTokenRow, PersonalAccessTokenRow, UserRow } from '../../db/types.ts';
import { param, prepared } from '../../db/prepared.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { announceCredentialEvents, tokenRevoked } from '../auth/credential-events.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findPersonalAccessTokenByDigest(db: Db, tokenDigest: string): Promise<PersonalAccessTokenRow | undefined> {
  return db.selectFrom('personal_access_tokens').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

/** What authentication needs of a personal access token, read beside its user's row. */
export interface TokenWithUser {
  token: Pick<PersonalAccessTokenRow, 'id' | 'user_id' | 'scopes' | 'impersonation' | 'revoked' | 'expires_at' | 'last_used_at'>;
  user: UserRow;
}

const tokenWithUserQuery = prepared((db) => db.selectFrom('personal_access_tokens')
  .innerJoin('users', 'users.id', 'personal_access_tokens.user_id')
  .selectAll('users')
  .select([
    'personal_access_tokens.id as token_id', 'personal_access_tokens.scopes as token_scopes',
    'personal_access_tokens.impersonation as token_impersonation', 'personal_access_tokens.revoked as token_revoked',
    'personal_access_tokens.expires_at as token_expires_at', 'personal_access_tokens.last_used_at as token_last_used_at',
  ])
  .where('personal_access_tokens.token_digest', '=', param<string>(0)));

/**
 * A personal access token by digest and its user, in one round trip (a request whose token is
 * not remembered yet reads both; issue 17 item 3). Undefined when either is missing.
 */
export async function findTokenWithUser(db: Db, tokenDigest: string): Promise<TokenWithUser | undefined> {
  const row = await tokenWithUserQuery.first(db as Kysely<DB>, [tokenDigest]);
  if (!row) return undefined;
  const { token_id, token_scopes, token_impersonation, token_revoked, token_expires_at, token_last_used_at, ...user } = row;
  return {
    token: {
      id: token_id, user_id: user.id, scopes: token_scopes, impersonation: token_impersonation, revoked: token_revoked,
      expires_at: token_expires_at, last_used_at: token_last_used_at,
    },
    user,
  };
}

export function findOauthAccessTokenByDigest(
  db: Db,
  tokenDigest: string,
): Promise<(OauthAccessTokenRow & { application_uid: string | null }) | undefined> {
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

/** Records use unless it was recorded within `intervalMs` (by any process), to keep writes off the hot read path. */
export async function touchPersonalAccessToken(db: Db, id: number, now: Date, intervalMs: number): Promise<void> {
  const cutoff = new Date(now.getTime() - intervalMs).toISOString();
  await db.updateTable('personal_access_tokens').set({ last_used_at: now.toISOString() })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', cutoff)]))
    .execute();
}

export type TokenState = 'active' | 'inactive';

export interface TokenFilters {
  /** Only this user's tokens; omitted for every user's. */
  userId?: number;
  /** Only impersonation tokens (true) or only personal access tokens (false). */
  impersonation?: boolean;
  /** active: not revoked and not expired; inactive: revoked or expired (PersonalAccessTokensFinder). */
  state?: TokenState;
  revoked?: boolean;
}

/**
 * Personal access and impersonation tokens in id order. Per user the index
 * personal_access_tokens_user (user_id, impersonation, id) serves the list; state and revoked
 * narrow those rows. Tokens expire at the start of their expiry date (as authentication checks).
 */
export function tokensQuery(db: Db, f: TokenFilters, today: string) {
  let q = db.selectFrom('personal_access_tokens').selectAll();
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.impersonation !== undefined) q = q.where('impersonation', '=', f.impersonation ? 1 : 0);
  if (f.revoked !== undefined) q = q.where('revoked', '=', f.revoked ? 1 : 0);
  if (f.state === 'active') {
    q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)]));
  } else if (f.state === 'inactive') {
    q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', today)]));
  }
  return q.orderBy('id');
}

export async function findPersonalAccessTokenById(db: Db, id: number): Promise<PersonalAccessTokenRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findImpersonationToken(db: Db, userId: number, id: number): Promise<PersonalAccessTokenRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('personal_access_tokens').selectAll()
    .where('user_id', '=', userId).where('impersonation', '=', 1).where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Revoking keeps the row: revoked tokens are still listed, as inactive. Announced as a credential
 * event of the token's kind (personal or impersonation), once committed.
 */
export async function revokePersonalAccessToken(db: Db, id: number): Promise<void> {
  const row = await db.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() })
    .where('id', '=', id).returning('impersonation').executeTakeFirst();
  if (row) {
    const kind = row.impersonation === 1 ? 'impersonation_token' : 'personal_access_token';
    await announceCredentialEvents(db, [tokenRevoked(kind, id)]);
  }
}

export type ResourceTokenRow = PersonalAccessTokenRow & { access_level: number };

/**
 * Tokens of a project's or group's bots (project and group access tokens): personal access tokens
 * of project_bot users (user_type 6) that are direct members of the resource, with their level.
 */
export function resourceTokensQuery(db: Db, sourceType: 'Project' | 'Namespace', sourceId: number) {
  return db.selectFrom('personal_access_tokens')
    .innerJoin('users', 'users.id', 'personal_access_tokens.user_id')
    .innerJoin('members', (join) => join.onRef('members.user_id', '=', 'users.id')
      .on('members.source_type', '=', sourceType).on('members.source_id', '=', sourceId))
    .selectAll('personal_access_tokens')
    .select('members.access_level')
    .where('users.user_type', '=', 6)
    .where('personal_access_tokens.impersonation', '=', 0);
}

export async function findResourceToken(
  db: Db,
  sourceType: 'Project' | 'Namespace',
  sourceId: number,
  tokenId: number,
): Promise<ResourceTokenRow | undefined> {
  if (!isStorableId(tokenId)) return undefined;
  return resourceTokensQuery(db, sourceType, sourceId).where('personal_access_tokens.id', '=', tokenId).executeTakeFirst();
}

/** The bot users (project_bot) that are direct members of a project or group. */
export async function resourceBotIds(db: Db, sourceType: 'Project' | 'Namespace', sourceId: number): Promise<number[]> {
  return resourceBotIdsOf(db, sourceType, [sourceId]);
}

/** The bot users (project_bot) that are direct members of any of these projects or groups. */
export async function resourceBotIdsOf(db: Db, sourceType: 'Project' | 'Namespace', sourceIds: number[]): Promise<number[]> {
  if (sourceIds.length === 0) return [];
  const rows = await db.selectFrom('members').innerJoin('users', 'users.id', 'members.user_id')
    .select('users.id').distinct().where('members.source_type', '=', sourceType).where('members.source_id', 'in', sourceIds)
    .where('users.user_type', '=', 6).execute();
  return rows.map((r) => r.id);
}
