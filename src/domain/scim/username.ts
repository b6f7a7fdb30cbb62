/**
 * The username of an account SCIM creates, from the identity provider's userName (the Service's
 * Namespace.clean_path then Uniquify): an email's domain goes, characters a path may not hold are
 * dropped, and a taken or reserved name gets a counter (`test_user` → `test_user1`; the Service's
 * scim_setup.md, "Duplicate usernames are also handled").
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { namespacePathError } from '../namespaces/paths.ts';
import { rootPathTakenByOther, usernameTaken } from '../users/users.queries.ts';

const MAX_USERNAME = 255;
/** Enough tries for any real collision run; past it the request is refused rather than looping. */
const MAX_TRIES = 100;

export function cleanUsername(userName: string): string {
  let path = userName.replace(/@.*$/s, '');
  path = path.replace(/[^a-zA-Z0-9_.-]/g, '');
  path = path.replace(/^[-.]+/, '').replace(/\.(git|atom)$/i, '').replace(/\.+$/, '');
  path = path.slice(0, MAX_USERNAME - 4);
  return path || 'blank';
}

/** A free username based on `userName`, or null when MAX_TRIES are taken. */
export async function uniqueUsername(db: Kysely<DB>, userName: string): Promise<string | null> {
  const base = cleanUsername(userName);
  for (let i = 0; i < MAX_TRIES; i += 1) {
    const candidate = i === 0 ? base : `${base}${i}`;
    if (namespacePathError(candidate, true)) continue;
    if (await usernameTaken(db, candidate, null) || await rootPathTakenByOther(db, candidate, null)) continue;
    return candidate;
  }
  return null;
}
