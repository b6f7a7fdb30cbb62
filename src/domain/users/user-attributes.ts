/**
 * The attributes an administrator sets on POST/PUT /users, and the User model's validations of
 * them with the Service's texts (app/models/user.rb, user_detail.rb, devise validatable): the
 * 400 `{"message": {attr: [texts]}}` body. Uniqueness of email and username is a 409 and is
 * checked before these (reference §1.6, §0.2).
 */
import type { UserRow } from '../../db/types.ts';
import { namespacePathError } from '../namespaces/paths.ts';
import { ValidationErrors } from '../validation-errors.ts';
import type { UploadedFile } from '../uploaded-file.ts';
import { avatarError } from './avatar.ts';
import { publicEmailTaken, rootPathTakenByOther, verifiedEmailsOf } from './users.queries.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

export interface UserAttributes {
  email?: string;
  name?: string;
  username?: string;
  password?: string;
  bio?: string;
  location?: string;
  skype?: string;
  linkedin?: string;
  twitter?: string;
  discord?: string;
  website_url?: string;
  organization?: string;
  job_title?: string;
  pronouns?: string;
  public_email?: string;
  commit_email?: string;
  note?: string;
  projects_limit?: number | null;
  theme_id?: number | null;
  color_scheme_id?: number | null;
  admin?: boolean | null;
  external?: boolean | null;
  can_create_group?: boolean | null;
  private_profile?: boolean | null;
  avatar?: UploadedFile;
  extern_uid?: string;
  provider?: string;
}

/** Devise's email format. */
const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;
/** Gitlab::Themes and Gitlab::ColorSchemes ids. */
const THEME_IDS = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
const COLOR_SCHEME_IDS = new Set([1, 2, 3, 4, 5, 6]);
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
const MAX_INT = 2_147_483_647;

const tooLong = (max: number) => `is too long (maximum is ${max} characters)`;

function checkLength(errors: ValidationErrors, attr: string, value: string | undefined, max: number): void {
  if (value !== undefined && [...value].length > max) errors.add(attr, tooLong(max));
}

/**
 * Validates the attributes that will be written. `existing` is the user being updated (null on
 * create); `passwordRequired` when neither reset_password nor force_random_password was asked.
 */
export async function validateUserAttributes(
  db: Kysely<DB>, attrs: UserAttributes, existing: UserRow | null, opts: { passwordRequired: boolean },
): Promise<ValidationErrors> {
  const errors = new ValidationErrors();
  if (attrs.name !== undefined || !existing) {
    if (!attrs.name?.trim()) errors.add('name', "can't be blank");
    checkLength(errors, 'name', attrs.name, 255);
  }
  if (attrs.email !== undefined || !existing) {
    if (!attrs.email?.trim()) errors.add('email', "can't be blank");
    else if (!EMAIL_FORMAT.test(attrs.email)) errors.add('email', 'is invalid');
  }
  if (opts.passwordRequired && !attrs.password) errors.add('password', "can't be blank");
  if (attrs.password) {
    if (attrs.password.length < PASSWORD_MIN) errors.add('password', `is too short (minimum is ${PASSWORD_MIN} characters)`);
    if (attrs.password.length > PASSWORD_MAX) errors.add('password', `is too long (maximum is ${PASSWORD_MAX} characters)`);
  }
  if (attrs.projects_limit !== undefined || !existing) {
    const limit = attrs.projects_limit;
    if (limit === null) errors.add('projects_limit', "can't be blank");
    else if (limit !== undefined && limit < 0) errors.add('projects_limit', 'must be greater than or equal to 0');
    else if (limit !== undefined && limit > MAX_INT) errors.add('projects_limit', `must be less than or equal to ${MAX_INT}`);
  }
  // The username is the personal namespace's path: its errors are reported on username.
  if (attrs.username !== undefined || !existing) {
    const username = attrs.username ?? '';
    if (!username) errors.add('username', "can't be blank");
    else {
      const pathError = namespacePathError(username, true);
      if (pathError) errors.add('username', pathError);
      else if (await rootPathTakenByOther(db, username, existing?.id ?? null)) errors.add('username', 'has already been taken');
      checkLength(errors, 'username', username, 255);
    }
  }
  if (attrs.theme_id !== undefined && attrs.theme_id !== null && !THEME_IDS.has(attrs.theme_id)) {
    errors.add('theme_id', `${attrs.theme_id} is not a valid theme`);
  }
  if (attrs.color_scheme_id !== undefined && attrs.color_scheme_id !== null && !COLOR_SCHEME_IDS.has(attrs.color_scheme_id)) {
    errors.add('color_scheme_id', `${attrs.color_scheme_id} is not a valid color scheme`);
  }
  // user_detail's limits; its `user_detail.bio` key is remapped to `bio` (reference §1.6).
  checkLength(errors, 'bio', attrs.bio, 255);
  checkLength(errors, 'pronouns', attrs.pronouns, 50);
  checkLength(errors, 'job_title', attrs.job_title, 200);
  if (attrs.discord && !/^\d{17,20}$/.test(attrs.discord)) errors.add('discord', 'must contain only a discord user ID.');

  const ownEmails = async () => verifiedEmailsOf(db, existing, attrs.email);
  if (attrs.public_email) {
    if (!EMAIL_FORMAT.test(attrs.public_email)) errors.add('public_email', 'is invalid');
    else if (!(await ownEmails()).has(attrs.public_email.toLowerCase())) errors.add('public_email', 'is not an email you own');
    else if (await publicEmailTaken(db, attrs.public_email, existing?.id ?? null)) errors.add('public_email', 'has already been taken');
  }
  if (attrs.commit_email) {
    if (!EMAIL_FORMAT.test(attrs.commit_email)) errors.add('commit_email', 'is invalid');
    else if (!(await ownEmails()).has(attrs.commit_email.toLowerCase())) errors.add('commit_email', 'is not an email you own');
  }
  if (attrs.avatar) {
    const problem = avatarError(attrs.avatar);
    if (problem) errors.add('avatar', problem);
  }
  return errors;
}
