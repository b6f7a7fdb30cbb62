/**
 * Deprovisioning and reprovisioning a group's SCIM identity (the Service's
 * Scim::Group::DeprovisioningService and ReprovisioningService; scim_setup.md, "Blocking access"):
 * deprovisioning marks the identity inactive and removes the user's membership of the group, of
 * its sub-groups and of their projects, so they lose all access the group gave; the account
 * itself stays. The group's last owner cannot be deprovisioned. Reprovisioning marks the
 * identity active again and adds the user back with the SAML provider's default role.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { SamlProviderRow } from '../../db/tables/scim.ts';
import { announceCredentialEvents, userChanged } from '../auth/credential-events.ts';
import { descendantGroupIds } from '../namespaces/namespaces.queries.ts';
import { findMember, insertMember } from '../members/members.queries.ts';
import { deleteMembershipsWithin, isGroupMember, otherOwnerExists, updateScimIdentity, type ScimUserRow } from './scim.queries.ts';

export interface ScimGroup {
  id: number;
  name: string;
  provider: SamlProviderRow;
}

export type DeprovisionResult = { ok: true } | { ok: false; reason: 'last_owner'; detail: string };

export async function deprovision(db: Kysely<DB>, group: ScimGroup, identity: ScimUserRow): Promise<DeprovisionResult> {
  const member = await findMember(db, 'Namespace', group.id, identity.user_id);
  if (member?.access_level === 50 && !(await otherOwnerExists(db, group.id, identity.user_id))) {
    return {
      ok: false, reason: 'last_owner',
      detail: `Could not remove ${identity.user.name} from ${group.name}. Cannot remove last group owner.`,
    };
  }
  const subGroups = [...(await descendantGroupIds(db, [group.id])).keys()];
  await db.transaction().execute(async (trx) => {
    await updateScimIdentity(trx, identity.id, { active: false });
    await deleteMembershipsWithin(trx, identity.user_id, [group.id, ...subGroups]);
    // The memberships' rows are read afresh after any write (db/write-epoch.ts); the event tells
    // the credential caches that the user's access changed, as every deprovisioning path does.
    await announceCredentialEvents(trx, [userChanged(identity.user_id, 'access')]);
  });
  return { ok: true };
}

/** Within the caller's transaction: the identity active, the user a member (existing memberships keep their role). */
export async function reprovisionIn(trx: Transaction<DB>, group: ScimGroup, identity: { id: number; user_id: number }): Promise<void> {
  await updateScimIdentity(trx, identity.id, { active: true });
  await addDefaultMembership(trx, group, identity.user_id);
}

export async function addDefaultMembership(trx: Transaction<DB>, group: ScimGroup, userId: number): Promise<void> {
  if (await isGroupMember(trx, group.id, userId)) return;
  await insertMember(trx, {
    sourceType: 'Namespace', sourceId: group.id, userId, accessLevel: group.provider.default_membership_role,
    createdById: null,
  });
}
