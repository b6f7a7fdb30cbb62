/**
 * What kind of account a user row is, and whether it may use the API at all (reference §1.8).
 */
import type { UserRow } from '../../db/types.ts';

/** user_type values of the Service (app/models/concerns/has_user_type.rb). */
export const USER_TYPES = {
  human: 0,
  support_bot: 1,
  alert_bot: 2,
  visual_review_bot: 3,
  service_user: 4,
  ghost: 5,
  project_bot: 6,
  migration_bot: 7,
  security_bot: 8,
  automation_bot: 9,
  security_policy_bot: 10,
  admin_bot: 11,
  service_account: 13,
} as const;

/** The user types that are not internal (User.non_internal). */
export const NON_INTERNAL_USER_TYPES: number[] = [
  USER_TYPES.human,
  USER_TYPES.project_bot,
  USER_TYPES.service_user,
  USER_TYPES.service_account,
];
const NON_INTERNAL = new Set<number>(NON_INTERNAL_USER_TYPES);
const BOTS = new Set<number>([USER_TYPES.support_bot, USER_TYPES.alert_bot, USER_TYPES.visual_review_bot, USER_TYPES.project_bot,
  USER_TYPES.migration_bot, USER_TYPES.security_bot, USER_TYPES.automation_bot, USER_TYPES.security_policy_bot,
  USER_TYPES.admin_bot, USER_TYPES.service_account]);

export function isInternal(user: Pick<UserRow, 'user_type'>): boolean {
  return !NON_INTERNAL.has(user.user_type);
}

export function isBot(user: Pick<UserRow, 'user_type'>): boolean {
  return BOTS.has(user.user_type);
}

/** `blocked?` of the Service: true for every blocking state, banned included. */
export function isBlockedState(state: string): boolean {
  return state === 'blocked' || state === 'ldap_blocked' || state === 'blocked_pending_approval' || state === 'banned';
}

/**
 * Why a user holding a valid credential may not use the API, or null when they may
 * (lib/gitlab/auth/user_access_denied_reason.rb). `webUrl` is where a deactivated user signs in.
 */
export function apiAccessDeniedReason(user: UserRow, webUrl: string, now: Date = new Date()): string | null {
  if (isInternal(user)) return 'This action cannot be performed by internal users';
  switch (user.state) {
    case 'blocked_pending_approval':
      return 'Your account is pending approval from your administrator and hence blocked.';
    case 'deactivated':
      return 'Your account has been deactivated by your administrator. ' +
        `Please log back in from a web browser to reactivate your account at ${webUrl}`;
    case 'blocked':
    case 'ldap_blocked':
    case 'banned':
      return 'Your account has been blocked.';
  }
  if (passwordExpired(user, now)) {
    // The Service names itself here; kiln says "Service", as the spec writes the brand.
    return 'Your password expired. Please access Service from a web browser to update your password.';
  }
  return null;
}

/** An expired password blocks the API unless the password was set automatically (never chosen). */
export function passwordExpired(user: UserRow, now: Date = new Date()): boolean {
  if (isBot(user) || user.password_automatically_set) return false;
  return user.password_expires_at !== null && user.password_expires_at <= now.toISOString();
}
