/**
 * PersonalAccessToken and ImpersonationToken, each with a `…WithToken` variant for the creation
 * response, the only time the secret is shown (reference §2.4). `expires_at` is a date.
 */
import { Type, type Static } from 'typebox';
import type { PersonalAccessTokenRow } from '../../db/types.ts';
import { parseScopes } from '../../domain/auth/scopes.ts';
import { todayDate } from '../../domain/clock.ts';

export const PersonalAccessTokenSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  revoked: Type.Boolean(),
  created_at: Type.String(),
  scopes: Type.Array(Type.String()),
  user_id: Type.Integer(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
}, { title: 'PersonalAccessToken' });

export const PersonalAccessTokenWithTokenSchema = Type.Object({
  ...PersonalAccessTokenSchema.properties,
  token: Type.String(),
}, { title: 'PersonalAccessTokenWithToken' });

export const ImpersonationTokenSchema = Type.Object({
  ...PersonalAccessTokenSchema.properties,
  impersonation: Type.Boolean(),
}, { title: 'ImpersonationToken' });

export const ImpersonationTokenWithTokenSchema = Type.Object({
  ...ImpersonationTokenSchema.properties,
  token: Type.String(),
}, { title: 'ImpersonationTokenWithToken' });

export type PersonalAccessToken = Static<typeof PersonalAccessTokenSchema>;
export type ImpersonationToken = Static<typeof ImpersonationTokenSchema>;

/** Not revoked and not expired; a token expires at the start of its expiry date (UTC). */
export function tokenActive(row: PersonalAccessTokenRow, now: Date = new Date()): boolean {
  return row.revoked === 0 && (row.expires_at === null || row.expires_at > todayDate(now));
}

export function presentPersonalAccessToken(row: PersonalAccessTokenRow, now: Date = new Date()): PersonalAccessToken {
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked === 1,
    created_at: row.created_at,
    scopes: parseScopes(row.scopes),
    user_id: row.user_id,
    last_used_at: row.last_used_at,
    active: tokenActive(row, now),
    expires_at: row.expires_at,
  };
}

export function presentImpersonationToken(row: PersonalAccessTokenRow, now: Date = new Date()): ImpersonationToken {
  return { ...presentPersonalAccessToken(row, now), impersonation: row.impersonation === 1 };
}
