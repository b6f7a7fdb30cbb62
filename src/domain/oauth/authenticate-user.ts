/**
 * Checks a login (username or primary email) and password, as Devise's database_authenticatable
 * and lockable do for the sign-in form and the password grant (reference gitlab-behavior §8.1:
 * "Failed attempts increment the lockout counter").
 *
 * Lockable (Devise defaults the Service keeps): every failure counts, the account locks at
 * MAXIMUM_ATTEMPTS and unlocks by itself UNLOCK_IN later; a locked account refuses even the right
 * password. An unknown login still pays for one password hash, so timing does not tell which
 * logins exist.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { hashPassword, verifyPassword } from '../users/password.ts';
import { isBlockedState, isInternal } from '../users/user-kind.ts';
import { findUserByLogin, recordFailedAttempt, unlockUser } from './oauth.queries.ts';
import { MAXIMUM_ATTEMPTS, UNLOCK_IN_MS } from './policy.ts';

export type AuthenticateFailure = 'invalid' | 'locked' | 'blocked' | 'pending_approval';

export type AuthenticateResult = { ok: true; user: UserRow } | { ok: false; reason: AuthenticateFailure };

let dummyHash: Promise<string> | null = null;

function lockActive(user: UserRow, now: Date): boolean {
  return user.locked_at !== null && Date.parse(user.locked_at) > now.getTime() - UNLOCK_IN_MS;
}

export async function authenticateUser(
  db: Kysely<DB>,
  login: string,
  password: string,
  now: Date = new Date(),
): Promise<AuthenticateResult> {
  const user = login === '' ? undefined : await findUserByLogin(db, login);
  if (!user || isInternal(user)) {
    dummyHash ??= hashPassword('not a password of anyone');
    await verifyPassword(password, await dummyHash);
    return { ok: false, reason: 'invalid' };
  }
  let current = user;
  // Devise unlocks an expired lock first, whether or not this attempt succeeds.
  if (current.locked_at !== null && !lockActive(current, now)) {
    await unlockUser(db, current.id);
    current = { ...current, failed_attempts: 0, locked_at: null };
  }
  const matches = await verifyPassword(password, current.encrypted_password);
  if (!matches || lockActive(current, now)) {
    await recordFailedAttempt(db, current.id, MAXIMUM_ATTEMPTS, now.toISOString());
    const lockedNow = lockActive(current, now) || current.failed_attempts + 1 >= MAXIMUM_ATTEMPTS;
    return { ok: false, reason: lockedNow ? 'locked' : 'invalid' };
  }
  if (current.state === 'blocked_pending_approval') return { ok: false, reason: 'pending_approval' };
  if (isBlockedState(current.state)) return { ok: false, reason: 'blocked' };
  return { ok: true, user: current };
}
