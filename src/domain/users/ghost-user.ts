/**
 * The ghost user (reference §1.8): the internal account that holds the contributions of deleted
 * users, created the first time a user is deleted without hard_delete.
 */
import type { Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { randomPassword, hashPassword } from './password.ts';
import { USER_TYPES } from './user-kind.ts';
import { findUserByType, insertUserWithNamespace, rootPathTakenByOther, emailTaken, usernameTaken } from './users.queries.ts';

const GHOST_BIO = 'This is a "Ghost User", created to hold all issues authored by users that have since been deleted. This user cannot be removed.';

/** `ghost`, or `ghost1`, `ghost2`… when a person already has the name (User.create_unique_internal). */
async function freeUsername(trx: Transaction<DB>, host: string): Promise<{ username: string; email: string }> {
  for (let n = 0; ; n += 1) {
    const suffix = n === 0 ? '' : String(n);
    const username = `ghost${suffix}`;
    const email = `ghost${suffix}@${host}`;
    if (!(await usernameTaken(trx, username, null)) && !(await rootPathTakenByOther(trx, username, null)) && !(await emailTaken(trx, email, null))) {
      return { username, email };
    }
  }
}

export async function findOrCreateGhostUser(trx: Transaction<DB>, host: string): Promise<UserRow> {
  const existing = await findUserByType(trx, USER_TYPES.ghost);
  if (existing) return existing;
  const { username, email } = await freeUsername(trx, host);
  return insertUserWithNamespace(trx, {
    username, email, name: 'Ghost User', bio: GHOST_BIO, user_type: USER_TYPES.ghost,
    encrypted_password: await hashPassword(randomPassword()), password_automatically_set: 1,
    projects_limit: 0, can_create_group: 0, confirmed_at: new Date().toISOString(),
  });
}
