/**
 * POST /users (spec, Users; reference §1.6): an administrator creates an account with its personal
 * namespace, optional identity, preferences and avatar, all in one transaction. A taken email
 * (primary or secondary, any case) or username is a conflict; everything else the User model
 * rejects is a validation failure.
 */
import type { Kysely } from 'kysely';
import type { DB, NewUser, UserRow } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { currentSettings } from '../settings/settings.ts';
import { updatePreferences } from '../user-preferences/user-preferences.queries.ts';
import { storeAvatar } from './avatar.ts';
import { hashPassword, randomPassword } from './password.ts';
import { validateUserAttributes, type UserAttributes } from './user-attributes.ts';
import {
  emailTaken, externUidTaken, insertUserWithNamespace, updateUserRow, rootPathTakenByOther, upsertIdentity, usernameTaken,
} from './users.queries.ts';

export interface CreateUserInput extends UserAttributes {
  email: string;
  name: string;
  username: string;
  reset_password?: boolean;
  force_random_password?: boolean;
  skip_confirmation?: boolean;
  view_diffs_file_by_file?: boolean;
}

export type UserWriteFailure =
  | { ok: false; reason: 'email_taken' }
  | { ok: false; reason: 'username_taken' }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> };

export type CreateUserResult = { ok: true; value: UserRow } | UserWriteFailure;


const flag = (b: boolean | null | undefined) => (b ? 1 : 0) as 0 | 1;

/** Whether `email` matches the administrator's user_default_internal_regex (a pattern that does not compile matches nothing). */
function matchesInternalRegex(pattern: string | null, email: string): boolean {
  if (!pattern) return false;
  try {
    return new RegExp(pattern).test(email);
  } catch {
    return false;
  }
}

export async function createUser(
  db: Kysely<DB>,
  input: CreateUserInput,
  opts: { createdById: number | null; dataDir: string },
): Promise<CreateUserResult> {
  if (await emailTaken(db, input.email, null)) return { ok: false, reason: 'email_taken' };
  if (await usernameTaken(db, input.username, null)) return { ok: false, reason: 'username_taken' };

  // reset_password and force_random_password take priority over password (spec, POST /users).
  const randomized = input.reset_password === true || input.force_random_password === true;
  const attrs: UserAttributes = { ...input, ...(randomized ? { password: undefined } : {}) };
  const errors = await validateUserAttributes(db, attrs, null, { passwordRequired: !randomized });
  if (input.provider !== undefined && input.extern_uid !== undefined && await externUidTaken(db, input.provider, input.extern_uid, null)) {
    errors.add('identities.extern_uid', 'has already been taken');
  }
  if (!errors.empty) return { ok: false, reason: 'invalid', errors: errors.errors };

  const settings = await currentSettings(db);
  // User's defaults: `external` from user_default_external unless the email matches
  // user_default_internal_regex, projects_limit from default_projects_limit.
  const external = input.external
    ?? (settings.user_default_external && !matchesInternalRegex(settings.user_default_internal_regex, input.email));
  const pendingApproval = settings.require_admin_approval_after_user_signup;
  const now = nowIso();
  const row: Omit<NewUser, 'created_at' | 'updated_at'> = {
    email: input.email,
    name: input.name,
    username: input.username,
    encrypted_password: await hashPassword(randomized ? randomPassword() : input.password!),
    state: pendingApproval ? 'blocked_pending_approval' : 'active',
    admin: flag(input.admin),
    external: flag(external),
    // External users can create neither groups nor projects (User#ensure_user_rights_and_limits).
    can_create_group: external ? 0 : flag(input.can_create_group ?? true),
    projects_limit: external ? 0 : (input.projects_limit ?? settings.default_projects_limit),
    private_profile: flag(input.private_profile),
    confirmed_at: input.skip_confirmation ? now : null,
    created_by_id: opts.createdById,
    bio: input.bio ?? '',
    location: input.location ?? '',
    skype: input.skype ?? '',
    linkedin: input.linkedin ?? '',
    twitter: input.twitter ?? '',
    discord: input.discord ?? '',
    website_url: input.website_url ?? '',
    organization: input.organization ?? '',
    job_title: input.job_title ?? '',
    pronouns: input.pronouns ?? null,
    public_email: input.public_email || null,
    commit_email: input.commit_email || null,
    note: input.note ?? null,
    ...(input.theme_id != null ? { theme_id: input.theme_id } : {}),
    ...(input.color_scheme_id != null ? { color_scheme_id: input.color_scheme_id } : {}),
  };

  try {
    const user = await db.transaction().execute(async (trx) => {
      let created = await insertUserWithNamespace(trx, row);
      if (input.provider !== undefined && input.extern_uid !== undefined) {
        await upsertIdentity(trx, created.id, input.provider, input.extern_uid);
      }
      if (input.view_diffs_file_by_file !== undefined) {
        await updatePreferences(trx, created.id, { view_diffs_file_by_file: input.view_diffs_file_by_file });
      }
      // The file is written before commit: a failed write rolls the account back.
      if (input.avatar) {
        created = await updateUserRow(trx, created.id, { avatar: await storeAvatar(opts.dataDir, created.id, input.avatar) });
      }
      return created;
    });
    return { ok: true, value: user };
  } catch (err) {
    // Another request took the email or username between the checks and the insert.
    if (!isUniqueViolation(err)) throw err;
    if (await emailTaken(db, input.email, null)) return { ok: false, reason: 'email_taken' };
    if (await usernameTaken(db, input.username, null)) return { ok: false, reason: 'username_taken' };
    // A group took the path between the check and the insert (one top-level namespace space).
    if (await rootPathTakenByOther(db, input.username, null)) {
      return { ok: false, reason: 'invalid', errors: { username: ['has already been taken'] } };
    }
    throw err;
  }
}
