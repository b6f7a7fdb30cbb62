/**
 * POST /Users of a group's SCIM API (the Service's Scim::Group::ProvisioningService): the
 * identity provider's user becomes a SCIM identity of the group, linked to the kiln account that
 * has the email (primary or secondary) or to a new account, with a group_saml identity of the
 * group's SAML provider and a membership with the provider's default role; all in one
 * transaction.
 *
 * An extern_uid the group already has answers that identity (the Service's "existing identity"
 * success), made active and a member again unless the request says `active: false`. A new account
 * gets a username cleaned and made unique from userName and a random password nobody knows.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { currentSettings } from '../settings/settings.ts';
import { hashPassword, randomPassword } from '../users/password.ts';
import { validateUserAttributes } from '../users/user-attributes.ts';
import { emailTaken, insertUserWithNamespace, rootPathTakenByOther, usernameTaken } from '../users/users.queries.ts';
import { addDefaultMembership, reprovisionIn, type ScimGroup } from './provisioning.ts';
import {
  findScimIdentity, findScimIdentityOfUser, findUserIdByAnyEmail, insertScimIdentity, isGroupMember, samlExternUidTaken,
  upsertGroupSamlIdentity, type ScimUserRow,
} from './scim.queries.ts';
import { uniqueUsername } from './username.ts';

export interface ProvisionInput {
  externUid: string;
  email: string;
  userName: string;
  name: string | undefined;
  active: boolean;
}

export type ProvisionResult =
  | { ok: true; identity: ScimUserRow }
  | { ok: false; reason: 'conflict' | 'invalid'; detail: string };

const conflict = (detail: string): ProvisionResult => ({ ok: false, reason: 'conflict', detail });

export async function provisionUser(db: Kysely<DB>, group: ScimGroup, input: ProvisionInput): Promise<ProvisionResult> {
  try {
    const existing = await findScimIdentity(db, group.id, input.externUid);
    if (existing) {
      if (input.active && (!existing.active || !(await isGroupMember(db, group.id, existing.user_id)))) {
        await db.transaction().execute((trx) => reprovisionIn(trx, group, existing));
      }
      return { ok: true, identity: (await findScimIdentity(db, group.id, input.externUid))! };
    }
    const userId = await findUserIdByAnyEmail(db, input.email);
    const result = userId !== undefined ? await linkUser(db, group, userId, input) : await createUser(db, group, input);
    if (!result.ok) return result;
    return { ok: true, identity: (await findScimIdentity(db, group.id, input.externUid))! };
  } catch (err) {
    // Another request took the extern_uid, email or username between the checks and the writes.
    if (!isUniqueViolation(err)) throw err;
    if (await findScimIdentity(db, group.id, input.externUid)) return conflict('Extern uid has already been taken');
    if (await emailTaken(db, input.email, null)) return conflict('Email has already been taken');
    return conflict('User has already been taken');
  }
}

async function linkUser(db: Kysely<DB>, group: ScimGroup, userId: number, input: ProvisionInput): Promise<ProvisionResult | { ok: true }> {
  // One SCIM identity per user in a group (scim_identities_group_user): the scim_setup.md 409 "User has already been taken".
  if (await findScimIdentityOfUser(db, group.id, userId)) return conflict('User has already been taken');
  if (await samlExternUidTaken(db, group.provider.id, input.externUid, userId)) return conflict('Extern uid has already been taken');
  await db.transaction().execute(async (trx) => {
    await insertScimIdentity(trx, { groupId: group.id, userId, externUid: input.externUid, active: input.active, provisionedUser: false });
    await upsertGroupSamlIdentity(trx, userId, group.provider.id, input.externUid);
    if (input.active) await addDefaultMembership(trx, group, userId);
  });
  return { ok: true };
}

/**
 * Tries of a new account's username. It is probed, then claimed by the insert; when accounts
 * from the same userName are provisioned at once, each round leaves the name to one of them (the
 * unique indexes on usernames and top-level paths) and the others probe again past it, rather than
 * answering 409 for a name they never asked for (issue 35, item 1).
 */
const USERNAME_TRIES = 20;

async function createUser(db: Kysely<DB>, group: ScimGroup, input: ProvisionInput): Promise<ProvisionResult | { ok: true }> {
  if (await samlExternUidTaken(db, group.provider.id, input.externUid, 0)) return conflict('Extern uid has already been taken');
  const encryptedPassword = await hashPassword(randomPassword());
  // User's default_value_for: a new account's projects limit is the instance's default_projects_limit.
  const projectsLimit = (await currentSettings(db)).default_projects_limit;
  for (let attempt = 1; ; attempt++) {
    const username = await uniqueUsername(db, input.userName);
    if (username === null) return conflict('Username has already been taken');
    const attributes = { name: input.name ?? '', email: input.email, username };
    const errors = await validateUserAttributes(db, attributes, null, { passwordRequired: false });
    // The name probed free was claimed by another account of the same userName before it was
    // checked: probe again, as when the insert itself loses the name.
    const onlyUsernameTaken = Object.keys(errors.errors).every((k) => k === 'username')
      && errors.errors.username?.every((m) => m === 'has already been taken');
    if (!errors.empty && onlyUsernameTaken && attempt < USERNAME_TRIES) continue;
    if (!errors.empty) return validationFailure(errors.errors);
    try {
      await db.transaction().execute(async (trx) => {
        const user = await insertUserWithNamespace(trx, {
          username, email: input.email, name: input.name!, encrypted_password: encryptedPassword, projects_limit: projectsLimit,
          // The Service's SCIM accounts: a password set automatically, the email still to confirm.
          password_automatically_set: 1, confirmed_at: null, created_by_id: null,
        });
        await upsertGroupSamlIdentity(trx, user.id, group.provider.id, input.externUid);
        await insertScimIdentity(trx, {
          groupId: group.id, userId: user.id, externUid: input.externUid, active: input.active, provisionedUser: true,
        });
        if (input.active) await addDefaultMembership(trx, group, user.id);
      });
      return { ok: true };
    } catch (err) {
      // Anything else taken (the extern_uid, the email) is the caller's to answer.
      if (!isUniqueViolation(err) || attempt >= USERNAME_TRIES) throw err;
      if (!(await usernameTaken(db, username, null)) && !(await rootPathTakenByOther(db, username, null))) throw err;
    }
  }
}

/**
 * A validation failure: a conflict when something is already taken (the Service's provisioning
 * answers 409 when any error says "has already been taken"), otherwise invalid.
 */
export function validationFailure(errors: Record<string, string[]>): { ok: false; reason: 'conflict' | 'invalid'; detail: string } {
  const detail = fullMessages(errors);
  return { ok: false, reason: detail.includes('has already been taken') ? 'conflict' : 'invalid', detail };
}

/** Rails' full messages: "Name can't be blank, Email is invalid". */
export function fullMessages(errors: Record<string, string[]>): string {
  return Object.entries(errors).flatMap(([attr, msgs]) => {
    const label = attr.charAt(0).toUpperCase() + attr.slice(1).replace(/_/g, ' ');
    return msgs.map((m) => `${label} ${m}`);
  }).join(', ');
}
