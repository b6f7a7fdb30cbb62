/** Every Kysely call of the deploy tokens area. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeployTokenRow, DeployTokenType } from '../../db/tables/deploy-tokens.ts';
import { isStorableId } from '../../db/constraints.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface DeployTokenFilter {
  /** Only tokens neither revoked nor expired (DeployToken.active: `revoked = false AND expires_at >= NOW()`). */
  active?: boolean;
  projectId?: number;
  groupId?: number;
}

/** DeployTokens::TokensFinder: the instance's, a project's or a group's tokens in id order. */
export function deployTokensQuery(db: Db, f: DeployTokenFilter, now: string) {
  let q = db.selectFrom('deploy_tokens').selectAll();
  if (f.projectId !== undefined) q = q.where('project_id', '=', f.projectId);
  if (f.groupId !== undefined) q = q.where('group_id', '=', f.groupId);
  if (f.active) q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>=', now)]));
  return q.orderBy('id');
}

export async function findHeldDeployToken(
  db: Db, holder: { projectId: number } | { groupId: number }, id: number,
): Promise<DeployTokenRow | undefined> {
  if (!isStorableId(id)) return undefined;
  let q = db.selectFrom('deploy_tokens').selectAll().where('id', '=', id);
  q = 'projectId' in holder ? q.where('project_id', '=', holder.projectId) : q.where('group_id', '=', holder.groupId);
  return q.executeTakeFirst();
}

export function findDeployTokenByDigest(db: Db, tokenDigest: string): Promise<DeployTokenRow | undefined> {
  return db.selectFrom('deploy_tokens').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

/** The project's tokens called `name` that still work, oldest first (index deploy_tokens_project). */
export function activeProjectTokensNamed(db: Db, projectId: number, name: string, now: string): Promise<DeployTokenRow[]> {
  return db.selectFrom('deploy_tokens').selectAll().where('project_id', '=', projectId).where('name', '=', name)
    .where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>=', now)]))
    .orderBy('id').execute();
}

export interface NewDeployToken {
  name: string;
  username: string | null;
  tokenDigest: string;
  tokenSealed: string | null;
  expiresAt: string | null;
  type: DeployTokenType;
  scopes: string;
  projectId: number | null;
  groupId: number | null;
  creatorId: number;
  createdAt: string;
}

export function insertDeployToken(db: Db, t: NewDeployToken): Promise<DeployTokenRow> {
  return db.insertInto('deploy_tokens').values({
    name: t.name, username: t.username, token_digest: t.tokenDigest, token_sealed: t.tokenSealed, expires_at: t.expiresAt,
    revoked: 0, deploy_token_type: t.type, scopes: t.scopes, project_id: t.projectId, group_id: t.groupId,
    creator_id: t.creatorId, created_at: t.createdAt,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteDeployToken(db: Db, id: number): Promise<void> {
  await db.deleteFrom('deploy_tokens').where('id', '=', id).execute();
}
