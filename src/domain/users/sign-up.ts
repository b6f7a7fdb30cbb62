/**
 * Signing up from the web form (the Service's RegistrationsController#create and the User
 * model's checks for accounts nobody created, app/models/user.rb 15.2): the administrator's
 * restrictions on the email come first —
 *
 * - `domain_denylist` (while `domain_denylist_enabled`): a matching domain "is not from an
 *   allowed domain.";
 * - `domain_allowlist`, when not empty: a domain matching none "domain is not authorized for
 *   sign-up" (the allowlist wins over the denylist, as signup_domain_valid? lets it);
 * - `email_restrictions` (while `email_restrictions_enabled`): an RE2 pattern (the Service's
 *   UntrustedRegexp, linear whatever the pattern) that must not match the email;
 *
 * a domain pattern's `*` standing for any text, matched whole without regard to case — then the
 * account is created as POST /users creates one (create-user.ts: name, username, email and
 * password rules, taken emails and usernames), without a creator. `require_admin_approval_after_user_signup`
 * makes it start blocked_pending_approval (create-user.ts). With `send_user_confirmation_email`
 * off the email is confirmed at once, as the Service skips confirmation then; with it on it
 * stays unconfirmed (kiln sends no confirmation mail and signing in does not ask for one).
 */
import type { Kysely } from 'kysely';
import { RE2JS } from 're2js';
import type { DB, UserRow } from '../../db/types.ts';
import { currentSettings } from '../settings/settings.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { wildcardMatches } from '../wildcard.ts';
import { createUser } from './create-user.ts';

export interface SignUpInput { name: string; username: string; email: string; password: string }

export type SignUpResult = { ok: true; user: UserRow } | { ok: false; errors: Record<string, string[]> };

/** Whether a domain matches a pattern of the allowlist or denylist (domain_matches?: `*` any text, no regard to case). */
export const domainMatches = (pattern: string, domain: string) => wildcardMatches(pattern, domain);

export interface SignUpRestrictions {
  domain_denylist_enabled: boolean;
  domain_denylist: string[];
  domain_allowlist: string[];
  email_restrictions_enabled: boolean;
  email_restrictions: string | null;
}

const RESTRICTED_EMAIL = 'is not allowed. Try again with a different email address, or contact your Service admin.';

/** The email's restriction message, or null when the instance's sign-up restrictions let it through. */
export function signUpEmailError(settings: SignUpRestrictions, email: string): string | null {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  let error: string | null = null;
  if (settings.domain_denylist_enabled && settings.domain_denylist.some((d) => domainMatches(d, domain))) {
    error = 'is not from an allowed domain.';
  }
  if (settings.domain_allowlist.length > 0) {
    error = settings.domain_allowlist.some((d) => domainMatches(d, domain)) ? null : 'domain is not authorized for sign-up';
  }
  if (error) return error;
  const restrictions = settings.email_restrictions_enabled ? settings.email_restrictions ?? '' : '';
  if (restrictions.trim() !== '') {
    let re: RE2JS | null = null;
    try {
      re = RE2JS.compile(restrictions);
    } catch {
      // A pattern RE2 cannot compile restricts nothing (UntrustedRegexp refuses it when saved).
    }
    if (re && re.matcher(email).find()) return RESTRICTED_EMAIL;
  }
  return null;
}

export async function signUpUser(db: Kysely<DB>, input: SignUpInput, opts: { dataDir: string }): Promise<SignUpResult> {
  const settings = await currentSettings(db);
  const restricted = signUpEmailError(settings, input.email);
  if (restricted) return { ok: false, errors: { email: [restricted] } };
  const created = await createUser(db, {
    name: input.name, username: input.username, email: input.email, password: input.password,
    skip_confirmation: !settings.send_user_confirmation_email,
  }, { createdById: null, dataDir: opts.dataDir });
  if (created.ok) return { ok: true, user: created.value };
  const errors = new ValidationErrors();
  if (created.reason === 'email_taken') errors.add('email', 'has already been taken');
  else if (created.reason === 'username_taken') errors.add('username', 'has already been taken');
  else for (const [k, msgs] of Object.entries(created.errors)) for (const m of msgs) errors.add(k, m);
  return { ok: false, errors: errors.errors };
}
