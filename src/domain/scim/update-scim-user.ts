/**
 * PATCH /Users/:id of a group's SCIM API (the Service's update_scim_user): `active: false`
 * deprovisions and nothing else in the request applies; `active: true` on an inactive identity
 * reprovisions; a new externalId moves the SCIM and group_saml identities to it.
 *
 * Name, userName and email: since 15.0 the Service accepts and ignores them, because an account
 * may be linked to the group only by its email and belong to its owner, not to the group's
 * identity provider. kiln applies them to accounts this group's provisioning created
 * (provisioned_user) and ignores them, with the same success, for linked accounts.
 */
import type { Kysely } from 'kysely';
import type { DB, UserUpdate } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { validateUserAttributes } from '../users/user-attributes.ts';
import { emailTaken, updatePersonalNamespace, updateUserRow, usernameTaken } from '../users/users.queries.ts';
import { deprovision, reprovisionIn, type ScimGroup } from './provisioning.ts';
import { validationFailure } from './provision-user.ts';
import { findScimIdentity, samlExternUidTaken, updateScimIdentity, upsertGroupSamlIdentity, type ScimUserRow } from './scim.queries.ts';

export interface ScimChanges {
  active?: boolean;
  externUid?: string;
  name?: string;
  userName?: string;
  email?: string;
}

export type UpdateResult = { ok: true } | { ok: false; reason: 'conflict' | 'invalid' | 'last_owner'; detail: string };

export async function updateScimUser(db: Kysely<DB>, group: ScimGroup, identity: ScimUserRow, changes: ScimChanges): Promise<UpdateResult> {
  if (changes.active === false) return identity.active ? deprovision(db, group, identity) : { ok: true };

  const userSet: UserUpdate = {};
  if (identity.provisioned_user) {
    const attrs = {
      ...(changes.name !== undefined && changes.name !== identity.user.name ? { name: changes.name } : {}),
      ...(changes.userName !== undefined && changes.userName !== identity.user.username ? { username: changes.userName } : {}),
      ...(changes.email !== undefined && changes.email.toLowerCase() !== identity.user.email.toLowerCase() ? { email: changes.email } : {}),
    };
    if (attrs.email !== undefined && await emailTaken(db, attrs.email, identity.user_id)) {
      return { ok: false, reason: 'conflict', detail: 'Email has already been taken' };
    }
    if (attrs.username !== undefined && await usernameTaken(db, attrs.username, identity.user_id)) {
      return { ok: false, reason: 'conflict', detail: 'Username has already been taken' };
    }
    const errors = await validateUserAttributes(db, attrs, identity.user, { passwordRequired: false });
    if (!errors.empty) return validationFailure(errors.errors);
    if (attrs.name !== undefined) userSet.name = attrs.name;
    if (attrs.username !== undefined) userSet.username = attrs.username;
    if (attrs.email !== undefined) {
      userSet.email = attrs.email;
      userSet.confirmed_at = null;
    }
  }

  const newUid = changes.externUid !== undefined && changes.externUid !== identity.extern_uid ? changes.externUid : undefined;
  if (newUid !== undefined) {
    const holder = await findScimIdentity(db, group.id, newUid);
    if ((holder && holder.id !== identity.id) || await samlExternUidTaken(db, group.provider.id, newUid, identity.user_id)) {
      return { ok: false, reason: 'conflict', detail: 'Extern uid has already been taken' };
    }
  }

  try {
    await db.transaction().execute(async (trx) => {
      if (changes.active === true && !identity.active) await reprovisionIn(trx, group, identity);
      if (newUid !== undefined) {
        await updateScimIdentity(trx, identity.id, { externUid: newUid });
        await upsertGroupSamlIdentity(trx, identity.user_id, group.provider.id, newUid);
      }
      if (Object.keys(userSet).length > 0) {
        await updateUserRow(trx, identity.user_id, { ...userSet, updated_at: nowIso() });
        await updatePersonalNamespace(trx, identity.user_id, { name: userSet.name, path: userSet.username });
      }
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, reason: 'conflict', detail: 'Resource has already been taken' };
  }
  return { ok: true };
}
