/**
 * Who a git client is (lib/gitlab/auth.rb find_for_git_client, reduced): HTTP Basic with any
 * username and a personal access or impersonation token; username `oauth2` with an OAuth access
 * token; username `gitlab-ci-token` with a CI job token. What the credential may do follows its
 * scopes (reference §9): read_repository → download, write_repository → download and push,
 * api → both, read_api → download. Job tokens may download only. Then a deploy token, its
 * username with its secret (deploy_token_check, after the personal access tokens as
 * find_for_git_client asks): `read_repository` → download, never push.
 */
import type { FastifyRequest } from 'fastify';
import type { KilnContext } from '../http/context.ts';
import type { UserRow } from '../db/types.ts';
import { digest } from '../domain/tokens/secret.ts';
import { findOauthAccessTokenByDigest, findPersonalAccessTokenByDigest } from '../domain/tokens/tokens.queries.ts';
import { findUserById } from '../domain/users/users.queries.ts';
import { apiAccessDeniedReason } from '../domain/users/user-kind.ts';
import { parseScopes } from '../domain/auth/scopes.ts';
import { todayDate } from '../domain/clock.ts';
import type { DeployTokenRow } from '../db/tables/deploy-tokens.ts';
import { deployTokenScopes, findDeployTokenForGit } from '../domain/deploy-tokens/deploy-tokens.ts';

import type { GitAbilities } from './git-access.ts';
import { basicCredentials } from '../http/auth/basic-credentials.ts';

export type { GitAbilities };

export type GitIdentity =
  | { kind: 'anonymous' }
  | { kind: 'user'; user: UserRow; abilities: GitAbilities; username: string }
  | { kind: 'deploy_token'; token: DeployTokenRow; abilities: GitAbilities }
  /** Credentials that do not authenticate (unknown, expired or revoked token). */
  | { kind: 'invalid' }
  /** A valid credential whose user may not use kiln now (blocked, deactivated …). */
  | { kind: 'denied'; reason: string };

export function abilitiesForScopes(scopes: string[]): GitAbilities {
  const has = (s: string) => scopes.includes(s);
  return {
    download: has('api') || has('read_api') || has('read_repository') || has('write_repository'),
    push: has('api') || has('write_repository'),
  };
}

async function tokenUser(ctx: KilnContext, username: string, secret: string): Promise<{ user: UserRow; scopes: string[] } | 'invalid'> {
  const tokenDigest = digest(secret);
  const now = new Date();
  if (username === 'oauth2') {
    const oauth = await findOauthAccessTokenByDigest(ctx.db, tokenDigest);
    if (oauth) {
      const expired = oauth.expires_in !== null && Date.parse(oauth.created_at) + oauth.expires_in * 1000 <= now.getTime();
      const revoked = oauth.revoked_at !== null && oauth.revoked_at <= now.toISOString();
      const user = await findUserById(ctx.db, oauth.resource_owner_id);
      return expired || revoked || !user ? 'invalid' : { user, scopes: parseScopes(oauth.scopes) };
    }
  }
  const pat = await findPersonalAccessTokenByDigest(ctx.db, tokenDigest);
  if (!pat || pat.revoked === 1 || (pat.expires_at !== null && pat.expires_at <= todayDate(now))) return 'invalid';
  if (pat.impersonation === 1 && !ctx.config.impersonationEnabled) return 'invalid';
  const user = await findUserById(ctx.db, pat.user_id);
  return user ? { user, scopes: parseScopes(pat.scopes) } : 'invalid';
}

export async function identifyGitClient(ctx: KilnContext, request: FastifyRequest): Promise<GitIdentity> {
  const creds = basicCredentials(request);
  if (!creds) return { kind: 'anonymous' };
  let user: UserRow | undefined;
  let abilities: GitAbilities;
  if (creds.username === 'gitlab-ci-token') {
    const job = ctx.jobTokens ? await ctx.jobTokens(ctx.db, creds.password) : null;
    user = job ? await findUserById(ctx.db, job.userId) : undefined;
    if (!user) return { kind: 'invalid' };
    abilities = { download: true, push: false };
  } else {
    const found = await tokenUser(ctx, creds.username, creds.password);
    if (found === 'invalid') {
      const deployToken = await findDeployTokenForGit(ctx.db, creds.username, creds.password);
      if (!deployToken) return { kind: 'invalid' };
      const read = deployTokenScopes(deployToken).includes('read_repository');
      return { kind: 'deploy_token', token: deployToken, abilities: { download: read, push: false } };
    }
    user = found.user;
    abilities = abilitiesForScopes(found.scopes);
  }
  const denied = apiAccessDeniedReason(user, ctx.config.externalUrl);
  if (denied) return { kind: 'denied', reason: denied };
  return { kind: 'user', user, abilities, username: creds.username };
}
