/**
 * Project and group access tokens (spec, Authentication: "Personal, project or group access
 * token"), as the Service 15.2 builds them (ResourceAccessTokens::CreateService, RevokeService):
 * each token belongs to a bot user of its own (user_type project_bot) that is a direct member of
 * the project or group at the token's access level. The token is an ordinary personal access
 * token of the bot, so it authenticates on the API and for git like one, and the bot's single
 * membership is what limits it to its project or group and level.
 *
 * Revoking revokes the token and deletes its bot (the Service queues DeleteUserWorker; kiln does
 * it at once, contributions going to the ghost user as for any deleted user).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { formatScopes, REPOSITORY_SCOPES } from '../auth/scopes.ts';
import { nowIso } from '../clock.ts';
import { insertMemberWithEvent } from '../members/members.queries.ts';
import { hashPassword, randomPassword } from '../users/password.ts';
import { USER_TYPES } from '../users/user-kind.ts';
import { findUserById, insertUserWithNamespace, rootPathTakenByOther, usernameTaken } from '../users/users.queries.ts';
import { deleteUser, type DeleteOptions } from '../users/delete-user.ts';
import { digest, generateToken } from './secret.ts';
import { insertPersonalAccessToken, revokePersonalAccessToken, type ResourceTokenRow } from './tokens.queries.ts';

/** Gitlab::Auth.resource_bot_scopes without the registry scopes kiln has no registry for. */
export const RESOURCE_BOT_SCOPES: readonly string[] = ['api', 'read_api', ...REPOSITORY_SCOPES];
export const ACCESS_LEVEL_VALUES = [10, 20, 30, 40, 50] as const;
export const DEFAULT_ACCESS_LEVEL = 40;
const OWNER = 50;

export interface Resource {
  /** The members table's source_type. */
  sourceType: 'Project' | 'Namespace';
  id: number;
  /** `project` or `group`, as the Service names the bot and its messages. */
  kind: 'project' | 'group';
}

export interface CreateResourceTokenInput {
  name: string;
  scopes: string[];
  accessLevel: number;
  expiresAt: string | null;
}

export type CreateResourceTokenResult =
  | { ok: true; value: { row: ResourceTokenRow; token: string; bot: UserRow } }
  | { ok: false; message: string };

/** Rails' Array#to_sentence, as the Service joins a model's full messages: "a", "a and b", "a, b, and c". */
function toSentence(items: string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/**
 * project_1_bot, then project_1_bot1, project_1_bot2, … (the Service's Uniquify on the username):
 * the first free one from `from` on, with its number.
 */
async function freeBotUsername(db: Kysely<DB>, resource: Resource, from: number): Promise<{ username: string; n: number }> {
  const base = `${resource.kind}_${resource.id}_bot`;
  for (let n = from; ; n++) {
    const candidate = n === 0 ? base : `${base}${n}`;
    if (!await usernameTaken(db, candidate, null) && !await rootPathTakenByOther(db, candidate, null)) return { username: candidate, n };
  }
}

/**
 * Tries of a bot's creation. The username is probed, then claimed by the insert; when requests
 * for one resource run at once, each round leaves the name to one of them (the unique index on
 * the username) and the others probe again past it, so this many requests at once all succeed.
 */
const BOT_USERNAME_TRIES = 50;

/**
 * Creates the bot, its membership and its token in one transaction. `creator.level` is the
 * creator's own access level (administrators count as owners): on a project only an owner hands
 * out the Owner level. Managing tokens takes Maintainer on a project and Owner on a group, so no
 * other level can exceed the creator's.
 */
export async function createResourceToken(
  db: Kysely<DB>, resource: Resource, creator: { id: number; level: number }, input: CreateResourceTokenInput, host: string,
): Promise<CreateResourceTokenResult> {
  // CreateService's order: the owner level first, then the bot user (its name), then the token (its scopes).
  if (resource.kind === 'project' && input.accessLevel === OWNER && creator.level < OWNER) {
    return { ok: false, message: 'Could not provision owner access to project access token' };
  }
  const name = input.name.trim();
  const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
  const userErrors: string[] = [];
  if (name === '') userErrors.push("Name can't be blank");
  if (name.length > 255) userErrors.push('Name is too long (maximum is 255 characters)');
  if (name.includes('\0')) userErrors.push('Name is invalid');
  if (userErrors.length > 0) return { ok: false, message: toSentence(userErrors) };
  const tokenErrors: string[] = [];
  if (scopes.length === 0) tokenErrors.push("Scopes can't be blank");
  if (!scopes.every((s) => RESOURCE_BOT_SCOPES.includes(s))) tokenErrors.push('Scopes can only contain available scopes');
  if (tokenErrors.length > 0) return { ok: false, message: toSentence(tokenErrors) };
  const token = generateToken();
  const encrypted = await hashPassword(randomPassword());
  let from = 0;
  for (let attempt = 0; attempt < BOT_USERNAME_TRIES; attempt++) {
    const { username, n } = await freeBotUsername(db, resource, from);
    try {
      const value = await db.transaction().execute(async (trx) => {
        const now = nowIso();
        const bot = await insertUserWithNamespace(trx, {
          username, name, email: `${username}@noreply.${host}`, encrypted_password: encrypted, password_automatically_set: 1,
          user_type: USER_TYPES.project_bot, state: 'active', confirmed_at: now, created_by_id: creator.id,
          projects_limit: 0, can_create_group: 0,
        });
        // The bot joins as any member does (a project's 'joined' event, ProjectMember#post_create_hook).
        await insertMemberWithEvent(trx, {
          sourceType: resource.sourceType,
          sourceId: resource.id,
          userId: bot.id,
          accessLevel: input.accessLevel,
          createdById: creator.id,
        });
        const row = await insertPersonalAccessToken(trx, {
          userId: bot.id, name, tokenDigest: digest(token), scopes: formatScopes(scopes), impersonation: false, expiresAt: input.expiresAt,
        });
        return { row: { ...row, access_level: input.accessLevel }, token, bot };
      });
      return { ok: true, value };
    } catch (err) {
      // Another request took the name between the check and the insert: try the next one.
      if (!isUniqueViolation(err)) throw err;
      from = n + 1;
    }
  }
  return { ok: false, message: 'Could not create the bot user, please try again' };
}

/**
 * Revokes the token and deletes its bot; both announce themselves as credential events, the
 * token's even when deleting the bot then fails.
 */
export async function revokeResourceToken(
  db: Kysely<DB>,
  token: ResourceTokenRow,
  bot: UserRow,
  opts: DeleteOptions,
): Promise<{ ok: true } | { ok: false; message: string }> {
  await revokePersonalAccessToken(db, token.id);
  const deleted = await deleteUser(db, bot, { ...opts, hardDelete: false });
  if (!deleted.ok) return { ok: false, message: `Failed to delete the bot user of ${token.name}` };
  return { ok: true };
}

/**
 * Deletes the bots of a project or group that is going away (the Service's Projects::DestroyService
 * removes them with the project), so their tokens stop with it: each deletion is announced as a
 * credential event (deleteUserRow).
 */
export async function removeResourceBots(db: Kysely<DB>, botIds: number[], opts: DeleteOptions): Promise<void> {
  for (const id of botIds) {
    const bot = await findUserById(db, id);
    if (!bot || bot.user_type !== USER_TYPES.project_bot) continue;
    await deleteUser(db, bot, { ...opts, hardDelete: false });
  }
}
