/**
 * Every Kysely call of SCIM provisioning: the group's SAML provider and SCIM token, its SCIM
 * identities with their users, and the group_saml identities and memberships that provisioning
 * writes beside them.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { SamlProviderRow, ScimIdentityRow } from '../../db/tables/scim.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const GROUP_SAML_PROVIDER = 'group_saml';

export function findSamlProvider(db: Db, groupId: number): Promise<SamlProviderRow | undefined> {
  return db.selectFrom('saml_providers').selectAll().where('group_id', '=', groupId).executeTakeFirst();
}

/** The group's SAML provider, created (enabled, Guest as default role) when it has none. */
export async function ensureSamlProvider(db: Db, groupId: number): Promise<SamlProviderRow> {
  const found = await findSamlProvider(db, groupId);
  if (found) return found;
  const now = nowIso();
  return db.insertInto('saml_providers').values({ group_id: groupId, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

/** Replaces the group's SCIM token digest (one per group: saml_providers_group, scim_tokens_group). */
export async function replaceScimToken(db: Db, groupId: number, tokenDigest: string): Promise<void> {
  const now = nowIso();
  const updated = await db.updateTable('scim_tokens').set({ token_digest: tokenDigest, updated_at: now })
    .where('group_id', '=', groupId).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await db.insertInto('scim_tokens').values({ group_id: groupId, token_digest: tokenDigest, created_at: now, updated_at: now }).execute();
}

export async function scimTokenDigestOf(db: Db, groupId: number): Promise<string | null> {
  const row = await db.selectFrom('scim_tokens').select('token_digest').where('group_id', '=', groupId).executeTakeFirst();
  return row?.token_digest ?? null;
}

/** A SCIM identity with the user it links (the SCIM User resource's data). */
export type ScimUserRow = ScimIdentityRow & { user: UserRow };

function withUsers(db: Db) {
  return db.selectFrom('scim_identities').innerJoin('users', 'users.id', 'scim_identities.user_id');
}

async function attachUsers(db: Db, identities: ScimIdentityRow[]): Promise<ScimUserRow[]> {
  if (identities.length === 0) return [];
  const users = await db.selectFrom('users').selectAll().where('id', 'in', [...new Set(identities.map((i) => i.user_id))]).execute();
  const byId = new Map(users.map((u) => [u.id, u]));
  return identities.flatMap((i) => (byId.has(i.user_id) ? [{ ...i, user: byId.get(i.user_id)! }] : []));
}

/** The group's SCIM identity for extern_uid, compared without regard to case (scim_identities_group_uid). */
export async function findScimIdentity(db: Db, groupId: number, externUid: string): Promise<ScimUserRow | undefined> {
  const row = await db.selectFrom('scim_identities').selectAll()
    .where('group_id', '=', groupId).where(sql`lower(extern_uid)`, '=', externUid.toLowerCase())
    .executeTakeFirst();
  return row ? (await attachUsers(db, [row]))[0] : undefined;
}

export function findScimIdentityOfUser(db: Db, groupId: number, userId: number): Promise<ScimIdentityRow | undefined> {
  return db.selectFrom('scim_identities').selectAll().where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
}

/** What a list filter narrows to: nothing, the identities of some extern_uid, or of some user. */
export type ScimListScope = { kind: 'all' } | { kind: 'externUid'; value: string } | { kind: 'userIds'; ids: number[] };

function scopedIdentities(db: Db, groupId: number, scope: ScimListScope) {
  let qb = withUsers(db).where('scim_identities.group_id', '=', groupId);
  if (scope.kind === 'externUid') qb = qb.where(sql`lower(scim_identities.extern_uid)`, '=', scope.value.toLowerCase());
  if (scope.kind === 'userIds') qb = scope.ids.length ? qb.where('scim_identities.user_id', 'in', scope.ids) : qb.where(sql.lit(1), '=', 0);
  return qb;
}

/**
 * One page of the group's SCIM identities in creation order, and how many there are in all
 * (RFC 7644 §3.4.2.4 requires totalResults; the count is index-only on scim_identities_group_id
 * and bounded by the group's size).
 */
export async function listScimIdentities(
  db: Db, groupId: number, scope: ScimListScope, offset: number, limit: number,
): Promise<{ total: number; rows: ScimUserRow[] }> {
  const countRow = await scopedIdentities(db, groupId, scope).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(countRow.n);
  if (limit === 0 || offset >= total) return { total, rows: [] };
  const identities = await scopedIdentities(db, groupId, scope).selectAll('scim_identities')
    .orderBy('scim_identities.id').limit(limit).offset(offset).execute();
  return { total, rows: await attachUsers(db, identities) };
}

/** Users by username (any case), by any of their emails, or by the local part of an email as username. */
export async function userIdsByName(db: Db, username: string): Promise<number[]> {
  const lower = username.toLowerCase();
  const byUsername = await db.selectFrom('users').select('id').where(sql`lower(username)`, '=', lower).executeTakeFirst();
  if (byUsername) return [byUsername.id];
  if (!lower.includes('@')) return [];
  const byEmail = await findUserIdByAnyEmail(db, lower);
  if (byEmail !== undefined) return [byEmail];
  const local = lower.slice(0, lower.indexOf('@'));
  if (!local) return [];
  const byLocal = await db.selectFrom('users').select('id').where(sql`lower(username)`, '=', local).executeTakeFirst();
  return byLocal ? [byLocal.id] : [];
}

/** The user whose primary or secondary email this is, without regard to case (User.find_by_any_email). */
export async function findUserIdByAnyEmail(db: Db, email: string): Promise<number | undefined> {
  const lower = email.toLowerCase();
  const primary = await db.selectFrom('users').select('id').where(sql`lower(email)`, '=', lower).executeTakeFirst();
  if (primary) return primary.id;
  const secondary = await db.selectFrom('emails').select('user_id').where(sql`lower(email)`, '=', lower).executeTakeFirst();
  return secondary?.user_id;
}

export async function insertScimIdentity(
  db: Db,
  v: { groupId: number; userId: number; externUid: string; active: boolean; provisionedUser: boolean },
): Promise<ScimIdentityRow> {
  const now = nowIso();
  return db.insertInto('scim_identities').values({
    group_id: v.groupId, user_id: v.userId, extern_uid: v.externUid, active: v.active ? 1 : 0,
    provisioned_user: v.provisionedUser ? 1 : 0, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function updateScimIdentity(db: Db, id: number, set: { active?: boolean; externUid?: string }): Promise<void> {
  await db.updateTable('scim_identities').set({
    ...(set.active !== undefined ? { active: set.active ? 1 : 0 } : {}),
    ...(set.externUid !== undefined ? { extern_uid: set.externUid } : {}),
    updated_at: nowIso(),
  }).where('id', '=', id).execute();
}

/** The user's group_saml identity of this SAML provider, set to extern_uid (one per provider: identities_user_provider_saml). */
export async function upsertGroupSamlIdentity(db: Db, userId: number, samlProviderId: number, externUid: string): Promise<void> {
  const updated = await db.updateTable('identities').set({ extern_uid: externUid })
    .where('user_id', '=', userId).where('provider', '=', GROUP_SAML_PROVIDER).where('saml_provider_id', '=', samlProviderId)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await db.insertInto('identities').values({
    user_id: userId, provider: GROUP_SAML_PROVIDER, extern_uid: externUid, saml_provider_id: samlProviderId, created_at: nowIso(),
  }).execute();
}

/** Another user already holds this extern_uid with the SAML provider (identities_saml_provider_uid). */
export async function samlExternUidTaken(db: Db, samlProviderId: number, externUid: string, exceptUserId: number): Promise<boolean> {
  const row = await db.selectFrom('identities').select('id')
    .where('saml_provider_id', '=', samlProviderId).where(sql`lower(extern_uid)`, '=', externUid.toLowerCase())
    .where('user_id', '!=', exceptUserId).executeTakeFirst();
  return row !== undefined;
}

/** The users' direct memberships of one group. */
export async function isGroupMember(db: Db, groupId: number, userId: number): Promise<boolean> {
  const row = await db.selectFrom('members').select('id')
    .where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/** Owners of the group other than this user (the Service's last_owner? guard). */
export async function otherOwnerExists(db: Db, groupId: number, userId: number): Promise<boolean> {
  const row = await db.selectFrom('members').select('id')
    .where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('access_level', '=', 50)
    .where('user_id', '!=', userId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Removes the user's memberships of the groups and of the projects in them (the Service's
 * Members::DestroyService takes a member's sub-group and project memberships with it).
 */
export async function deleteMembershipsWithin(db: Db, userId: number, groupIds: number[]): Promise<void> {
  if (groupIds.length === 0) return;
  await db.deleteFrom('members').where('user_id', '=', userId)
    .where('source_type', '=', 'Namespace').where('source_id', 'in', groupIds).execute();
  await db.deleteFrom('members').where('user_id', '=', userId).where('source_type', '=', 'Project')
    .where('source_id', 'in', (eb) => eb.selectFrom('projects').select('id').where('namespace_id', 'in', groupIds))
    .execute();
}
