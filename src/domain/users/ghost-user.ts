/**
 * The ghost user (reference §1.8): the internal account that holds the contributions of deleted
 * users, created the first time a user is deleted without hard_delete.
 *
 * There is one (a unique index on the ghost user type, migration 2026-11-26T1710). Deletions that
 * run at once may each find none and create it: the creation is its own transaction, before the
 * deletion's, and the one that loses the race to the index (or to the username) finds the
 * winner's instead of failing the deletion (issue 35, item 1).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { randomPassword, hashPassword } from './password.ts';
import { USER_TYPES } from './user-kind.ts';
import { findUserByType, insertUserWithNamespace, rootPathTakenByOther, emailTaken, usernameTaken } from './users.queries.ts';

const GHOST_BIO = 'This is a "Ghost User", created to hold all issues authored by users that have since been deleted.'
  + ' This user cannot be removed.';

/** Creations tried before giving up: each lost one means another request created the ghost or took the probed name. */
const MAX_TRIES = 5;

/** `ghost`, or `ghost1`, `ghost2`… when a person already has the name (User.create_unique_internal). */
async function freeUsername(db: Kysely<DB> | Transaction<DB>, host: string): Promise<{ username: string; email: string }> {
  for (let n = 0; ; n += 1) {
    const suffix = n === 0 ? '' : String(n);
    const username = `ghost${suffix}`;
    const email = `ghost${suffix}@${host}`;
    const taken = await usernameTaken(db, username, null) || await rootPathTakenByOther(db, username, null)
      || await emailTaken(db, email, null);
    if (!taken) return { username, email };
  }
}

/** The ghost user, created (and committed) if there is none yet. */
export async function ensureGhostUser(db: Kysely<DB>, host: string): Promise<UserRow> {
  for (let attempt = 0; ; attempt += 1) {
    const existing = await findUserByType(db, USER_TYPES.ghost);
    if (existing) return existing;
    const { username, email } = await freeUsername(db, host);
    try {
      return await insertUserWithNamespace(db, {
        username, email, name: 'Ghost User', bio: GHOST_BIO, user_type: USER_TYPES.ghost,
        encrypted_password: await hashPassword(randomPassword()), password_automatically_set: 1,
        projects_limit: 0, can_create_group: 0, confirmed_at: new Date().toISOString(),
      });
    } catch (err) {
      if (!isUniqueViolation(err) || attempt + 1 >= MAX_TRIES) throw err;
    }
  }
}
