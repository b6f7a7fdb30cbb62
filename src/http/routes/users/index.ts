/**
 * Users and what hangs on them: accounts, keys, emails, tokens, status, preferences, follows,
 * memberships (spec, Users and its sub-sections).
 *
 * Every path of the area and its guard: `npm run routes -- users`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import users from './users.ts';
import personalAccessTokens from './personal-access-tokens.ts';
import impersonationTokens from './impersonation-tokens.ts';
import accounts from './accounts.ts';
import adminActions from './admin-actions.ts';
import customAttributes from './custom-attributes.ts';
import gpgKeys from './gpg-keys.ts';
import emails from './emails.ts';
import status from './status.ts';
import preferences from './preferences.ts';
import follows from './follows.ts';
import counts from './counts.ts';
import activities from './activities.ts';
import sshKeys from './ssh-keys.ts';
import keyLookup from './key-lookup.ts';
import memberships from './memberships.ts';
import notificationSettings from './notification-settings.ts';

export default async function usersArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'users', {
    'users': users,                    // /user, /users, /users/:id
    'personal-access-tokens': personalAccessTokens, // /personal_access_tokens, /users/:id/personal_access_tokens
    'impersonation-tokens': impersonationTokens, // /users/:user_id/impersonation_tokens, POST /users/:user_id/personal_access_tokens
    'accounts': accounts,              // POST /users, PUT /users/:id, DELETE /users/:id/identities/:provider
    // /users/:id/(block|unblock|deactivate|activate|ban|unban|approve|reject|disable_two_factor), DELETE /users/:id
    'admin-actions': adminActions,
    'custom-attributes': customAttributes, // /users/:id/custom_attributes
    'gpg-keys': gpgKeys,               // /user/gpg_keys, /users/:id/gpg_keys (+ revoke)
    'emails': emails,                  // /user/emails, /users/:id/emails
    'status': status,                  // /user/status, /users/:user_id/status
    'preferences': preferences,        // /user/preferences
    'follows': follows,                // /users/:id/(follow|unfollow|followers|following)
    'counts': counts,                  // /user_counts
    'activities': activities,          // /user/activities
    'ssh-keys': sshKeys,               // /user/keys, /users/:user_id/keys
    'key-lookup': keyLookup,           // /keys/:id, /keys?fingerprint=
    'memberships': memberships,        // /users/:id/memberships
    // /notification_settings, /projects/:id/notification_settings, /groups/:id/notification_settings
    'notification-settings': notificationSettings,
  });
}
