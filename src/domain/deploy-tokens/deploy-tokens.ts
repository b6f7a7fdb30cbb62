/**
 * Deploy tokens (the Service's DeployToken, DeployTokens::CreateService and
 * DeployTokenMethods): a project's or a group's token with registry, package and repository
 * scopes, the secret returned once on creation and kept as a digest. They authenticate git over
 * HTTP (lib/gitlab/auth.rb deploy_token_check: the HTTP Basic username must be the token's
 * username) for the project they belong to or any project of their group and its subgroups
 * (DeployToken#has_access_to?), and fetch only: `read_repository` gives `download_code`, and no
 * scope of a deploy token pushes in 15.2.
 *
 * A project's token named `gitlab-deploy-token` reaches its jobs as CI_DEPLOY_USER and
 * CI_DEPLOY_PASSWORD (Ci::Build#deploy_token_variables). The Service can read its secret back
 * because it keeps every deploy token encrypted (token_encrypted); kiln keeps digests, and a sealed
 * copy (ci-variables/encryption.ts, the key of the CI variables) only of tokens with that name, the
 * only ones whose secret must be read back.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeployTokenRow, DeployTokenType } from '../../db/tables/deploy-tokens.ts';
import { nowIso, todayDate } from '../clock.ts';
import { digest, generateToken, safeEqual } from '../tokens/secret.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import type { RunnerVariable } from '../runners/predefined-variables.ts';
import { activeProjectTokensNamed, findDeployTokenByDigest, insertDeployToken } from './deploy-tokens.queries.ts';

/** DeployToken::AVAILABLE_SCOPES in 15.2. */
export const DEPLOY_TOKEN_SCOPES = [
  'read_repository', 'read_registry', 'write_registry', 'read_package_registry', 'write_package_registry',
] as const;
export type DeployTokenScope = typeof DEPLOY_TOKEN_SCOPES[number];

/** DeployToken::GITLAB_DEPLOY_TOKEN_NAME. */
export const GITLAB_DEPLOY_TOKEN_NAME = 'gitlab-deploy-token';

const USERNAME_FORMAT = /^[a-zA-Z0-9.+_-]+$/;
const MAX_LENGTH = 255;

export function deployTokenUsername(row: Pick<DeployTokenRow, 'id' | 'username'>): string {
  return row.username ?? `gitlab+deploy-token-${row.id}`;
}

export function deployTokenScopes(row: Pick<DeployTokenRow, 'scopes'>): DeployTokenScope[] {
  const stored = row.scopes.split(' ');
  // In AVAILABLE_SCOPES order, as DeployToken#scopes lists them.
  return DEPLOY_TOKEN_SCOPES.filter((s) => stored.includes(s));
}

/** DeployToken#expired?: past its expiry day. */
export function deployTokenExpired(row: Pick<DeployTokenRow, 'expires_at'>, now = new Date()): boolean {
  return row.expires_at !== null && row.expires_at.slice(0, 10) < todayDate(now);
}

/**
 * DeployToken.active, the scope git authentication and the CI variables look tokens up through:
 * not revoked and `expires_at >= NOW()` (a moment, where #expired? compares days).
 */
export function deployTokenActive(row: Pick<DeployTokenRow, 'expires_at' | 'revoked'>, now = new Date()): boolean {
  return row.revoked === 0 && (row.expires_at === null || row.expires_at >= now.toISOString());
}

export interface CreateDeployTokenInput {
  name: string;
  scopes: string[];
  expiresAt: string | null;
  username: string | null;
  holder: { projectId: number } | { groupId: number };
  creatorId: number;
}

/**
 * DeployToken's validations, in the order of the model, as `errors.full_messages`: the caller
 * answers their sentence with 400 (DeployTokenMethods#create_deploy_token_payload_for).
 */
function validate(input: CreateDeployTokenInput, username: string | null): string[] {
  const messages: string[] = [];
  if (!input.scopes.some((s) => (DEPLOY_TOKEN_SCOPES as readonly string[]).includes(s))) messages.push("Scopes can't be blank");
  if (username !== null) {
    if ([...username].length > MAX_LENGTH) messages.push(`Username is too long (maximum is ${MAX_LENGTH} characters)`);
    if (!USERNAME_FORMAT.test(username)) messages.push("Username can contain only letters, digits, '_', '-', '+', and '.'");
  }
  if ([...input.name].length > MAX_LENGTH) messages.push(`Name is too long (maximum is ${MAX_LENGTH} characters)`);
  return messages;
}

export type CreateDeployTokenResult =
  | { ok: true; row: DeployTokenRow; token: string }
  | { ok: false; messages: string[] };

export async function createDeployToken(db: Kysely<DB>, sealer: Sealer, input: CreateDeployTokenInput): Promise<CreateDeployTokenResult> {
  // create_deploy_token_for: `params[:username].presence`.
  const username = input.username !== null && input.username.trim() !== '' ? input.username : null;
  const messages = validate(input, username);
  if (messages.length > 0) return { ok: false, messages };
  const token = generateToken(20);
  const project = 'projectId' in input.holder;
  const type: DeployTokenType = project ? 'project_type' : 'group_type';
  const row = await insertDeployToken(db, {
    name: input.name, username, tokenDigest: digest(token),
    tokenSealed: project && input.name === GITLAB_DEPLOY_TOKEN_NAME ? sealer.seal(token) : null,
    expiresAt: input.expiresAt, type, scopes: [...new Set(input.scopes)].join(' '),
    projectId: 'projectId' in input.holder ? input.holder.projectId : null,
    groupId: 'groupId' in input.holder ? input.holder.groupId : null,
    creatorId: input.creatorId, createdAt: nowIso(),
  });
  return { ok: true, row, token };
}

/**
 * deploy_token_check: an active token whose secret is `password` and whose username is `username`;
 * undefined otherwise (the client is then not authenticated at all).
 */
export async function findDeployTokenForGit(db: Kysely<DB>, username: string, password: string): Promise<DeployTokenRow | undefined> {
  if (password === '') return undefined;
  const row = await findDeployTokenByDigest(db, digest(password));
  if (!row || !deployTokenActive(row) || !safeEqual(deployTokenUsername(row), username)) return undefined;
  return row;
}

/**
 * DeployToken#has_access_to?: its own project, or any project under its group. `lineage`: the
 * ids of the project's namespace and its ancestors.
 */
export function deployTokenReaches(row: DeployTokenRow, projectId: number, lineage: readonly number[]): boolean {
  if (row.deploy_token_type === 'project_type') return row.project_id === projectId;
  return row.group_id !== null && lineage.includes(row.group_id);
}

/**
 * Ci::Build#deploy_token_variables: the project's active `gitlab-deploy-token`
 * (`project.deploy_tokens.gitlab_deploy_token`), its username and its secret (masked).
 */
export async function deployTokenVariables(db: Kysely<DB>, sealer: Sealer, projectId: number): Promise<RunnerVariable[]> {
  const rows = await activeProjectTokensNamed(db, projectId, GITLAB_DEPLOY_TOKEN_NAME, new Date().toISOString());
  // find_by: the first one.
  const row = rows.find((r) => r.token_sealed !== null);
  if (!row?.token_sealed) return [];
  return [
    { key: 'CI_DEPLOY_USER', value: deployTokenUsername(row), public: true, masked: false },
    { key: 'CI_DEPLOY_PASSWORD', value: sealer.open(row.token_sealed), public: false, masked: true },
  ];
}
