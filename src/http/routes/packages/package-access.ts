/**
 * Who may reach a project's packages, and as whom (the Service's PackagesHelpers and the
 * route settings of lib/api/generic_packages.rb, 15.2). Besides kiln's usual credentials
 * (PRIVATE-TOKEN, OAuth, session, and on the generic routes JOB-TOKEN / job_token), the generic
 * routes take:
 *
 * - a deploy token (deploy_token_allowed): in the `Deploy-Token` header or as the password of HTTP
 *   Basic, looked up first (Gitlab::Auth::AuthFinders#deploy_token_from_request); it reaches its
 *   own project or its group's projects, pulls with read_package_registry and publishes with
 *   write_package_registry (ProjectPolicy's deploy token rules);
 * - HTTP Basic with username `gitlab-ci-token` and a job token (job_token_allowed), or any username
 *   and a personal access token (basic_auth_personal_access_token), refused with 401 when it
 *   names no valid credential.
 *
 * Writes need a credential (authenticate_non_get!). A project with packages_enabled off refuses
 * every package action with 403.
 */
import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import type { DeployTokenRow } from '../../../db/tables/deploy-tokens.ts';
import type { ProjectRow } from '../../../db/tables/projects.ts';
import type { Actor } from '../../../domain/permissions/access.ts';
import { visibleWithoutMembership } from '../../../domain/permissions/access.ts';
import { canOnProject, type ProjectAction } from '../../../domain/permissions/project.policy.ts';
import { deployTokenActive, deployTokenReaches, deployTokenScopes } from '../../../domain/deploy-tokens/deploy-tokens.ts';
import { findDeployTokenByDigest } from '../../../domain/deploy-tokens/deploy-tokens.queries.ts';
import { findProjectByIdOrPath } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findTokenWithUser } from '../../../domain/tokens/tokens.queries.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { apiAccessDeniedReason } from '../../../domain/users/user-kind.ts';
import { parseScopes, routeScopes } from '../../../domain/auth/scopes.ts';
import { digest } from '../../../domain/tokens/secret.ts';
import { todayDate } from '../../../domain/clock.ts';
import { forbidden, insufficientScope, invalidToken, notFound, TOKEN_EXPIRED, TOKEN_REVOKED, unauthorized } from '../../errors.ts';
import { loadProject } from '../../loaders/containers.ts';
import { basicCredentials } from '../../auth/basic-credentials.ts';

const deployTokens = new WeakMap<FastifyRequest, DeployTokenRow>();

export type PackageAction = Extract<ProjectAction, 'read_package' | 'create_package' | 'destroy_package'>;

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

async function activeDeployToken(request: FastifyRequest, secret: string): Promise<DeployTokenRow | null> {
  if (secret === '' || secret.length > 255) return null;
  const row = await findDeployTokenByDigest(request.server.kiln.db, digest(secret));
  return row && deployTokenActive(row) ? row : null;
}

/** Basic credentials as a job token (username gitlab-ci-token) or a personal access token. */
async function basicCaller(request: FastifyRequest, creds: { username: string; password: string }): Promise<void> {
  const ctx = request.server.kiln;
  const now = new Date();
  if (creds.username === 'gitlab-ci-token' && ctx.jobTokens) {
    const job = await ctx.jobTokens(ctx.db, creds.password);
    const user = job ? await findUserById(ctx.db, job.userId) : undefined;
    if (job && user) {
      const denied = apiAccessDeniedReason(user, ctx.config.externalUrl, now);
      if (denied) throw forbidden(denied);
      const credential = { kind: 'job_token' as const, id: job.jobId, jobId: job.jobId, scopes: [] };
      request.caller = { user, initialUser: user, credential, sudo: false };
      return;
    }
  }
  const found = creds.password === '' ? undefined : await findTokenWithUser(ctx.db, digest(creds.password));
  if (!found || (found.token.impersonation && !ctx.config.impersonationEnabled)) throw unauthorized();
  const { token, user } = found;
  if (token.expires_at !== null && token.expires_at <= todayDate(now)) throw invalidToken(TOKEN_EXPIRED);
  if (token.revoked === 1) throw invalidToken(TOKEN_REVOKED);
  const denied = apiAccessDeniedReason(user, ctx.config.externalUrl, now);
  if (denied) throw forbidden(denied);
  const scopes = parseScopes(token.scopes);
  const allowed = routeScopes(request.method);
  if (!allowed.some((s) => scopes.includes(s))) throw insufficientScope(allowed);
  request.caller = {
    user, initialUser: user, sudo: false,
    credential: { kind: token.impersonation ? 'impersonation_token' : 'personal_access_token', id: token.id, scopes },
  };
}

/**
 * The generic routes' extra credentials, after kiln's authentication and before the parameters
 * are validated (a 401 comes before a 400).
 */
export const packageCredentials: preValidationHookHandler = async (request) => {
  if (!request.caller) {
    const basic = basicCredentials(request);
    const header = request.headers['deploy-token'];
    const secret = basic ? basic.password : typeof header === 'string' ? header : '';
    const token = await activeDeployToken(request, secret);
    if (token) {
      deployTokens.set(request, token);
      return;
    }
    if (basic) await basicCaller(request, basic);
  }
  if (!request.caller && !isRead(request.method)) throw unauthorized();
};

export interface PackageProjectContext {
  project: ProjectRow;
  fullPath: string;
  lineage: number[];
  /** The user actor; anonymous for a deploy token. */
  actor: Actor;
  deployToken: DeployTokenRow | null;
}

/** What a deploy token may do with the project's packages (ProjectPolicy 15.2). */
function deployTokenMay(token: DeployTokenRow, ctx: { project: ProjectRow; lineage: number[] }, action: PackageAction): boolean {
  if (!deployTokenReaches(token, ctx.project.id, ctx.lineage)) return false;
  const scopes = deployTokenScopes(token);
  if (action === 'read_package') return scopes.includes('read_package_registry') || scopes.includes('write_package_registry');
  if (action === 'create_package') return scopes.includes('write_package_registry');
  return false;
}

export function mayOnPackages(ctx: PackageProjectContext, action: PackageAction): boolean {
  if (!ctx.project.packages_enabled) return false;
  if (ctx.deployToken && deployTokenMay(ctx.deployToken, ctx, action)) return true;
  return canOnProject(ctx.actor, action, ctx.project);
}

/**
 * The project `:id` names, seen by the caller (404 `Project Not Found` when they may not see it),
 * and 403 unless they may do `action` with its packages.
 */
export async function loadPackageProject(request: FastifyRequest, id: string, action: PackageAction): Promise<PackageProjectContext> {
  const deployToken = deployTokens.get(request) ?? null;
  let ctx: PackageProjectContext;
  if (deployToken) {
    const db = request.server.kiln.db;
    const project = await findProjectByIdOrPath(db, id);
    const ns = project ? (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id) : undefined;
    if (!project || !ns) throw notFound('Project');
    const anonymous: Actor = { user: null, accessLevel: 0 };
    ctx = { project, fullPath: `${ns.fullPath}/${project.path}`, lineage: ns.lineage, actor: anonymous, deployToken };
    // A token that reaches the project with a package scope sees it (read_project); otherwise it
    // is anonymous.
    const sees = deployTokenMay(deployToken, ctx, 'read_package') || visibleWithoutMembership(anonymous, project.visibility_level);
    if (!sees) throw notFound('Project');
  } else {
    const loaded = await loadProject(request, id);
    const fullPath = `${loaded.namespace.fullPath}/${loaded.project.path}`;
    ctx = { project: loaded.project, fullPath, lineage: loaded.lineage, actor: loaded.actor, deployToken };
  }
  if (!mayOnPackages(ctx, action)) throw forbidden();
  return ctx;
}
