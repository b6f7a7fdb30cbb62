/**
 * The Service's `User.find_by(id:)` + `not_found!('User')` of the per-user sub-resources (keys,
 * GPG keys, emails, tokens): the user or 404 `404 User Not Found`. An id past the integer column's
 * range matches no user (rather than failing the query on PostgreSQL).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../db/types.ts';
import { isStorableId } from '../db/constraints.ts';
import { findUserById } from '../domain/users/users.queries.ts';
import { notFound } from './errors.ts';

export async function userOr404(db: Kysely<DB>, id: number): Promise<UserRow> {
  const user = isStorableId(id) ? await findUserById(db, id) : undefined;
  if (!user) throw notFound('User');
  return user;
}
