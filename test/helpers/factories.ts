/** Rows made directly in the database, named after the roles tests need. */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB, NewUser, UserRow } from '../../src/db/types.ts';
import { insertUserWithNamespace } from '../../src/domain/users/users.queries.ts';
import { insertPersonalAccessToken } from '../../src/domain/tokens/tokens.queries.ts';
import { digest, generateHexToken, generateToken } from '../../src/domain/tokens/secret.ts';
import { nowIso } from '../../src/domain/clock.ts';

let seq = 0;

export async function createUser(db: Kysely<DB>, attrs: Partial<NewUser> = {}): Promise<UserRow> {
  seq += 1;
  const tag = `${process.pid}${seq}${crypto.randomBytes(2).toString('hex')}`;
  return insertUserWithNamespace(db, {
    username: `user${tag}`, email: `user${tag}@example.com`, name: `User ${tag}`, confirmed_at: nowIso(), ...attrs,
  });
}

export const createAdmin = (db: Kysely<DB>, attrs: Partial<NewUser> = {}) => createUser(db, { admin: 1, ...attrs });

export interface TokenOptions {
  scopes?: string[];
  expiresAt?: string | null;
  revoked?: boolean;
  impersonation?: boolean;
  name?: string;
}

/** A personal access (or impersonation) token; returns the raw value. */
export async function createToken(db: Kysely<DB>, user: UserRow, o: TokenOptions = {}): Promise<string> {
  const raw = generateToken();
  const row = await insertPersonalAccessToken(db, {
    userId: user.id, name: o.name ?? 'test', tokenDigest: digest(raw), scopes: (o.scopes ?? ['api']).join(' '),
    impersonation: o.impersonation ?? false, expiresAt: o.expiresAt ?? null,
  });
  if (o.revoked) await db.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', row.id).execute();
  return raw;
}

/** An OAuth access token issued to a throwaway application; returns the raw value. */
export async function createOauthToken(db: Kysely<DB>, user: UserRow, o: { scopes?: string[]; expiresIn?: number | null; createdAt?: string; revoked?: boolean } = {}): Promise<string> {
  const now = nowIso();
  const app = await db.insertInto('oauth_applications').values({
    name: 'test app', uid: generateHexToken(), secret_digest: digest(generateHexToken()), redirect_uri: 'http://localhost/cb',
    scopes: 'api read_user', created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  const raw = generateHexToken();
  await db.insertInto('oauth_access_tokens').values({
    application_id: app.id, resource_owner_id: user.id, token_digest: digest(raw), scopes: (o.scopes ?? ['api']).join(' '),
    expires_in: o.expiresIn === undefined ? 7200 : o.expiresIn, created_at: o.createdAt ?? now, revoked_at: o.revoked ? now : null,
  }).execute();
  return raw;
}

/** A signed-in browser session; returns the raw cookie value. */
export async function createSession(db: Kysely<DB>, user: UserRow): Promise<string> {
  const raw = generateHexToken();
  await db.insertInto('sessions').values({
    session_digest: digest(raw), user_id: user.id, created_at: nowIso(), expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  }).execute();
  return raw;
}
