/**
 * A group's SCIM token (the Service generates it on the group's SAML SSO settings page; kiln also
 * through POST /groups/:id/scim_token): a new random token replaces the old one, only its SHA-256
 * digest is stored, and the group's SAML provider is created with it when the group has none, so
 * provisioned users' group_saml identities have a provider id to carry.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { digest, generateToken, safeEqual } from '../tokens/secret.ts';
import { ensureSamlProvider, replaceScimToken, scimTokenDigestOf } from './scim.queries.ts';

/** 40 characters of 6 bits: 240 bits, past any guessing. */
const TOKEN_LENGTH = 40;

export async function createScimToken(db: Kysely<DB>, groupId: number): Promise<string> {
  const token = generateToken(TOKEN_LENGTH);
  const write = () => db.transaction().execute(async (trx) => {
    await ensureSamlProvider(trx, groupId);
    await replaceScimToken(trx, groupId, digest(token));
  });
  try {
    await write();
  } catch (err) {
    // Two owners asked at once and the other created the group's rows first: now they are
    // there, so this request's write updates them (one provider and one token per group).
    if (!isUniqueViolation(err)) throw err;
    await write();
  }
  return token;
}

/**
 * Whether `token` is the group's SCIM token. The digests are compared in constant time; a group
 * without a token is compared against a digest nobody has, so both answers take the same time.
 */
export async function scimTokenMatches(db: Kysely<DB>, groupId: number | null, token: string): Promise<boolean> {
  const stored = groupId === null ? null : await scimTokenDigestOf(db, groupId);
  const given = digest(token);
  return safeEqual(given, stored ?? '0'.repeat(given.length)) && stored !== null;
}
