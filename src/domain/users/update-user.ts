/**
 * PUT /users/:id (reference §0.2, §1.6): 409 for an email or username another user has, 400 for
 * what the User model rejects, otherwise every given attribute is written in one transaction with
 * the personal namespace, identity, preferences and avatar.
 *
 * A password an administrator sets for someone else is already expired (password_expires_at =
 * now), so that user must choose a new one before using the API again (spec, PUT /users/:id).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow, UserUpdate } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { updatePreferences } from '../user-preferences/user-preferences.queries.ts';
import { storeAvatar } from './avatar.ts';
import type { UserWriteFailure } from './create-user.ts';
import { hashPassword } from './password.ts';
import { validateUserAttributes, type UserAttributes } from './user-attributes.ts';
import { currentSettings } from '../settings/settings.ts';
import {
  emailTaken, externUidTaken, updatePersonalNamespace, updateUserRow, rootPathTakenByOther, upsertIdentity, usernameTaken,
} from './users.queries.ts';

export interface UpdateUserInput extends UserAttributes {
  skip_reconfirmation?: boolean;
  view_diffs_file_by_file?: boolean;
}

export type UpdateUserResult = { ok: true; value: UserRow } | UserWriteFailure;

const flag = (b: boolean | null | undefined) => (b ? 1 : 0) as 0 | 1;

/** Plain text columns copied as given. */
const TEXT_COLUMNS = ['bio', 'location', 'skype', 'linkedin', 'twitter', 'discord', 'website_url', 'organization', 'job_title'] as const;

export async function updateUser(
  db: Kysely<DB>, user: UserRow, input: UpdateUserInput, opts: { actorId: number; dataDir: string },
): Promise<UpdateUserResult> {
  if (input.email !== undefined && await emailTaken(db, input.email, user.id)) return { ok: false, reason: 'email_taken' };
  if (input.username !== undefined && await usernameTaken(db, input.username, user.id)) return { ok: false, reason: 'username_taken' };

  const errors = await validateUserAttributes(db, input, user, { passwordRequired: false });
  const externUidConflict = input.provider !== undefined && input.extern_uid !== undefined
    && await externUidTaken(db, input.provider, input.extern_uid, user.id);
  if (externUidConflict) {
    errors.add('identities.extern_uid', 'has already been taken');
  }
  if (!errors.empty) return { ok: false, reason: 'invalid', errors: errors.errors };

  const now = nowIso();
  const set: UserUpdate = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.username !== undefined) set.username = input.username;
  if (input.email !== undefined && input.email !== user.email) {
    set.email = input.email;
    // Without skip_reconfirmation the new address is unconfirmed until its owner confirms it.
    set.confirmed_at = input.skip_reconfirmation ? (user.confirmed_at ?? now) : null;
  }
  for (const column of TEXT_COLUMNS) if (input[column] !== undefined) set[column] = input[column];
  if (input.pronouns !== undefined) set.pronouns = input.pronouns || null;
  if (input.note !== undefined) set.note = input.note;
  if (input.public_email !== undefined) set.public_email = input.public_email || null;
  if (input.commit_email !== undefined) set.commit_email = input.commit_email || null;
  if (input.theme_id != null) set.theme_id = input.theme_id;
  if (input.color_scheme_id != null) set.color_scheme_id = input.color_scheme_id;
  if (input.admin != null) set.admin = flag(input.admin);
  if (input.private_profile !== undefined) set.private_profile = flag(input.private_profile);
  if (input.can_create_group != null) set.can_create_group = flag(input.can_create_group);
  if (input.projects_limit != null) set.projects_limit = input.projects_limit;
  if (input.external != null && flag(input.external) !== user.external) {
    set.external = flag(input.external);
    // User#ensure_user_rights_and_limits: external users lose group and project creation;
    // becoming internal again restores the defaults unless this request sets them.
    if (input.external) {
      set.can_create_group = 0;
      set.projects_limit = 0;
    } else {
      set.can_create_group ??= 1;
      set.projects_limit ??= (await currentSettings(db)).default_projects_limit;
    }
  }
  if (input.password) {
    set.encrypted_password = await hashPassword(input.password);
    set.password_automatically_set = 0;
    set.password_expires_at = opts.actorId !== user.id ? now : null;
  }

  try {
    const updated = await db.transaction().execute(async (trx) => {
      if (input.avatar) set.avatar = await storeAvatar(opts.dataDir, user.id, input.avatar);
      const row = await updateUserRow(trx, user.id, set);
      await updatePersonalNamespace(trx, user.id, { name: set.name, path: set.username });
      if (input.provider !== undefined && input.extern_uid !== undefined) {
        await upsertIdentity(trx, user.id, input.provider, input.extern_uid);
      }
      if (input.view_diffs_file_by_file !== undefined) {
        await updatePreferences(trx, user.id, { view_diffs_file_by_file: input.view_diffs_file_by_file });
      }
      return row;
    });
    return { ok: true, value: updated };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    if (input.email !== undefined && await emailTaken(db, input.email, user.id)) return { ok: false, reason: 'email_taken' };
    if (input.username !== undefined && await usernameTaken(db, input.username, user.id)) return { ok: false, reason: 'username_taken' };
    // A group took the path between the check and the update (one top-level namespace space).
    if (input.username !== undefined && await rootPathTakenByOther(db, input.username, user.id)) {
      return { ok: false, reason: 'invalid', errors: { username: ['has already been taken'] } };
    }
    throw err;
  }
}
