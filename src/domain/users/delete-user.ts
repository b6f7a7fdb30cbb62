/**
 * DELETE /users/:id and reject (spec, Users; reference §1.7). Guards first: each may refuse the
 * deletion with a 409 message. Then, in one transaction, a soft delete hands the user's
 * contributions to the ghost user (created on demand) before the account goes; a hard delete
 * removes them with it.
 *
 * Other areas extend the two tables below: a guard for what must block a deletion, a
 * contribution mover for rows that outlive their author.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { groupsSolelyOwnedBy } from '../members/members.queries.ts';
import { removeAvatar } from './avatar.ts';
import { findOrCreateGhostUser } from './ghost-user.ts';
import { USER_TYPES } from './user-kind.ts';
import { deleteUserRow } from './users.queries.ts';

export interface DeleteOptions {
  /** Delete contributions (and solely owned groups) instead of moving them to the ghost user. */
  hardDelete: boolean;
  /** Host of the instance, for the ghost user's email. */
  host: string;
  /** KILN_DATA_DIR, where the user's avatar file is removed from. */
  dataDir: string;
}

type Refusal = { reason: 'forbidden' } | { reason: 'conflict'; message: string };
type DeleteGuard = (db: Kysely<DB>, user: UserRow, opts: DeleteOptions) => Promise<Refusal | null>;
type ContributionMover = (trx: Transaction<DB>, from: UserRow, ghost: UserRow) => Promise<void>;

const GUARDS: DeleteGuard[] = [
  // The ghost user holds every deleted user's contributions; it cannot be removed (UserPolicy).
  async (_db, user) => (user.user_type === USER_TYPES.ghost ? { reason: 'forbidden' } : null),
  // A group must keep an owner: its sole owner can only go with hard_delete (reference §1.7).
  async (db, user, opts) => (!opts.hardDelete && (await groupsSolelyOwnedBy(db, user.id)).length > 0
    ? { reason: 'conflict', message: 'User cannot be removed while is the sole-owner of a group' }
    : null),
];

/**
 * Rows authored by the user that must survive a soft delete, re-pointed at the ghost user
 * (Users::MigrateToGhostUserService). Personal snippets, keys, emails, tokens and memberships
 * are the user's own and go with the account.
 */
const CONTRIBUTION_MOVERS: ContributionMover[] = [];

export type DeleteUserResult = { ok: true } | ({ ok: false } & Refusal);

export async function deleteUser(db: Kysely<DB>, user: UserRow, opts: DeleteOptions): Promise<DeleteUserResult> {
  for (const guard of GUARDS) {
    const refusal = await guard(db, user, opts);
    if (refusal) return { ok: false, ...refusal };
  }
  await db.transaction().execute(async (trx) => {
    if (!opts.hardDelete) {
      const ghost = await findOrCreateGhostUser(trx, opts.host);
      for (const move of CONTRIBUTION_MOVERS) await move(trx, user, ghost);
    }
    await deleteUserRow(trx, user.id);
  });
  await removeAvatar(opts.dataDir, user.id);
  return { ok: true };
}
