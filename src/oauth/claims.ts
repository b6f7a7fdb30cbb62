/**
 * OpenID Connect claims about a user, as the Service configures doorkeeper-openid_connect
 * (reference gitlab-behavior §8.4): `sub` is the user id as a string; `email` is the primary
 * email when the token has the `email` scope and the public email otherwise; absent values are
 * omitted rather than sent as null. Userinfo also carries the group claims (group-claims.ts).
 */
import crypto from 'node:crypto';
import type { UserRow } from '../db/types.ts';
import { DEVELOPER_GROUPS_CLAIM, MAINTAINER_GROUPS_CLAIM, OWNER_GROUPS_CLAIM, type GroupClaims } from './group-claims.ts';

export interface ClaimContext {
  externalUrl: string;
  secretKeyBase: string;
}

function compact<T extends Record<string, unknown>>(claims: T): Partial<T> {
  return Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null && v !== undefined && v !== '')) as Partial<T>;
}

/** `sub_legacy`: SHA-256 of "<id>-<secret_key_base>", kept by the Service for old integrations. */
function subLegacy(user: UserRow, ctx: ClaimContext): string {
  return crypto.createHash('sha256').update(`${user.id}-${ctx.secretKeyBase}`).digest('hex');
}

function emailClaims(user: UserRow, scopes: string[]): { email?: string; email_verified?: boolean } {
  if (scopes.includes('email')) return { email: user.email, email_verified: user.confirmed_at !== null };
  // Public emails can only be chosen among verified ones.
  if (user.public_email) return { email: user.public_email, email_verified: true };
  return {};
}

function websiteUrl(raw: string): string | null {
  if (!raw) return null;
  return /^https?:\/\//i.test(raw) ? raw : `http://${raw}`;
}

/** Claims for both the id_token and userinfo. */
export function sharedClaims(user: UserRow, scopes: string[], ctx: ClaimContext) {
  return compact({ sub_legacy: subLegacy(user, ctx), ...emailClaims(user, scopes) });
}

/** The /oauth/userinfo body: `sub` and every user_info claim, the group claims last. */
export function userinfoClaims(user: UserRow, scopes: string[], ctx: ClaimContext, groupClaims: GroupClaims) {
  const shared = sharedClaims(user, scopes, ctx);
  return compact({
    sub: String(user.id),
    sub_legacy: shared.sub_legacy,
    name: user.name,
    nickname: user.username,
    preferred_username: user.username,
    email: shared.email,
    email_verified: shared.email_verified,
    website: websiteUrl(user.website_url),
    profile: `${ctx.externalUrl}/${user.username}`,
    picture: user.avatar ? `${ctx.externalUrl}/uploads/-/system/user/avatar/${user.id}/${encodeURIComponent(user.avatar)}` : null,
    groups: groupClaims.groups,
    ...groupClaims.byRole,
  });
}

/** Names for the discovery document's claims_supported. */
export const CLAIMS_SUPPORTED = [
  'iss', 'sub', 'aud', 'exp', 'iat', 'sub_legacy', 'name', 'nickname', 'preferred_username', 'email', 'email_verified',
  'website', 'profile', 'picture', 'groups', 'groups_direct', OWNER_GROUPS_CLAIM, MAINTAINER_GROUPS_CLAIM, DEVELOPER_GROUPS_CLAIM,
];
