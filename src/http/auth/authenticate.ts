/**
 * Who is calling: the credential sources of the spec's Authentication table, tried in the
 * Service's order (reference §5.1), then token validity, the user's right to use the API, sudo
 * (reference §5.3) and the route's scopes (reference §5.2). Runs as a preValidation hook, so it
 * answers 401/403 before parameter validation answers 400 (reference §6.4).
 */
import type { FastifyRequest } from 'fastify';
import type { KilnContext, Credential } from '../context.ts';
import { digest } from '../../domain/tokens/secret.ts';
import { findOauthAccessTokenByDigest, findPersonalAccessTokenByDigest, findSessionByDigest, touchPersonalAccessToken } from '../../domain/tokens/tokens.queries.ts';
import { findUserById, findUserByIdOrUsername, touchLastActivity } from '../../domain/users/users.queries.ts';
import { apiAccessDeniedReason } from '../../domain/users/user-kind.ts';
import { parseScopes, routeScopes } from '../../domain/auth/scopes.ts';
import { todayDate } from '../../domain/clock.ts';
import {
  forbidden, IMPERSONATION_DISABLED, insufficientScope, invalidToken, notFound, TOKEN_EXPIRED, TOKEN_REVOKED, unauthorized,
} from '../errors.ts';
import type { CachedCredential } from './cache.ts';
import { SESSION_COOKIE, validCsrfToken } from './session-token.ts';

function param(request: FastifyRequest, name: string): string | undefined {
  const q = (request.query as Record<string, unknown> | undefined)?.[name];
  if (typeof q === 'string' && q !== '') return q;
  const body = request.body as Record<string, unknown> | undefined;
  const b = body && typeof body === 'object' && !Buffer.isBuffer(body) ? body[name] : undefined;
  return typeof b === 'string' && b !== '' ? b : undefined;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function bearer(request: FastifyRequest): string | undefined {
  const auth = header(request, 'authorization');
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m?.[1];
}

export function sudoIdentifier(request: FastifyRequest): string | undefined {
  return header(request, 'sudo') ?? param(request, 'sudo');
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

async function loadPersonalAccessToken(ctx: KilnContext, tokenDigest: string): Promise<CachedCredential | null> {
  const row = await findPersonalAccessTokenByDigest(ctx.db, tokenDigest);
  if (!row) return null;
  const user = await findUserById(ctx.db, row.user_id);
  if (!user) return null;
  return {
    credential: { kind: row.impersonation ? 'impersonation_token' : 'personal_access_token', id: row.id, scopes: parseScopes(row.scopes) },
    user, expiresAt: row.expires_at, revoked: row.revoked === 1,
  };
}

async function loadOauthToken(ctx: KilnContext, tokenDigest: string): Promise<CachedCredential | null> {
  const row = await findOauthAccessTokenByDigest(ctx.db, tokenDigest);
  if (!row) return null;
  const user = await findUserById(ctx.db, row.resource_owner_id);
  if (!user) return null;
  const expiresAt = row.expires_in === null ? null : new Date(Date.parse(row.created_at) + row.expires_in * 1000).toISOString();
  return {
    credential: { kind: 'oauth_token', id: row.id, scopes: parseScopes(row.scopes), applicationUid: row.application_uid },
    user, expiresAt, revoked: row.revoked_at !== null && row.revoked_at <= new Date().toISOString(),
  };
}

/** Looks a token up by digest, from the cache when fresh; `kinds` limits where it may be found. */
async function resolveToken(ctx: KilnContext, raw: string, kinds: { pat: boolean; oauth: boolean }): Promise<CachedCredential | null> {
  const tokenDigest = digest(raw);
  const key = `t:${tokenDigest}`;
  const cached = ctx.authCache.get(key);
  if (cached) {
    const isPat = cached.credential.kind !== 'oauth_token';
    return (isPat && kinds.pat) || (!isPat && kinds.oauth) ? cached : null;
  }
  const found = (kinds.pat ? await loadPersonalAccessToken(ctx, tokenDigest) : null)
    ?? (kinds.oauth ? await loadOauthToken(ctx, tokenDigest) : null);
  if (found) ctx.authCache.set(key, found);
  return found;
}

async function resolveSession(ctx: KilnContext, request: FastifyRequest): Promise<CachedCredential | null> {
  const raw = request.cookies?.[SESSION_COOKIE];
  if (!raw) return null;
  // Cookie sessions act only for reads, or for writes that prove they come from our own pages.
  if (!isRead(request.method) && !validCsrfToken(ctx.secretKeyBase, raw, header(request, 'x-csrf-token'))) return null;
  const key = `s:${digest(raw)}`;
  const cached = ctx.authCache.get(key);
  if (cached) return cached;
  const session = await findSessionByDigest(ctx.db, digest(raw));
  if (!session || session.expires_at <= new Date().toISOString()) return null;
  const user = await findUserById(ctx.db, session.user_id);
  if (!user) return null;
  const found: CachedCredential = { credential: { kind: 'session', id: session.id, scopes: [] }, user, expiresAt: session.expires_at, revoked: false };
  ctx.authCache.set(key, found);
  return found;
}

async function resolveJobToken(ctx: KilnContext, raw: string): Promise<CachedCredential | null> {
  if (!ctx.jobTokens) return null;
  const job = await ctx.jobTokens(ctx.db, raw);
  if (!job) return null;
  const user = await findUserById(ctx.db, job.userId);
  if (!user) return null;
  return { credential: { kind: 'job_token', id: job.jobId, jobId: job.jobId, scopes: [] }, user, expiresAt: null, revoked: false };
}

/** Finds the credential the request presents; throws 401 when one is presented but unknown. */
async function findCredential(ctx: KilnContext, request: FastifyRequest, jobTokenRoute: boolean): Promise<CachedCredential | null> {
  const bearerToken = bearer(request);
  if (jobTokenRoute) {
    const jobToken = header(request, 'job-token') ?? param(request, 'job_token') ?? param(request, 'token') ?? bearerToken;
    if (jobToken) {
      const found = await resolveJobToken(ctx, jobToken);
      if (found) return found;
      if (!bearerToken || jobToken !== bearerToken) throw unauthorized();
    }
  }
  const privateToken = header(request, 'private-token') ?? param(request, 'private_token');
  if (privateToken) {
    const found = await resolveToken(ctx, privateToken, { pat: true, oauth: false });
    if (!found) throw unauthorized();
    return found;
  }
  const accessToken = bearerToken ?? param(request, 'access_token') ?? param(request, 'bearer_token');
  if (accessToken) {
    const found = await resolveToken(ctx, accessToken, { pat: true, oauth: true });
    if (!found) throw unauthorized();
    return found;
  }
  return resolveSession(ctx, request);
}

function checkValidity(ctx: KilnContext, found: CachedCredential, now: Date): void {
  const kind = found.credential.kind;
  if (kind === 'session' || kind === 'job_token') return;
  if (found.expiresAt !== null) {
    // Personal access tokens expire at the start of their expiry date (UTC); OAuth tokens at an instant.
    const expired = kind === 'oauth_token' ? found.expiresAt <= now.toISOString() : found.expiresAt <= todayDate(now);
    if (expired) throw invalidToken(TOKEN_EXPIRED);
  }
  if (found.revoked) throw invalidToken(TOKEN_REVOKED);
}

async function recordUse(ctx: KilnContext, found: CachedCredential, now: Date): Promise<void> {
  const today = todayDate(now);
  if (found.activityRecordedOn !== today && found.user.last_activity_on !== today) {
    await touchLastActivity(ctx.db, found.user.id, now);
  }
  found.activityRecordedOn = today;
  const kind = found.credential.kind;
  if ((kind === 'personal_access_token' || kind === 'impersonation_token') && (found.usageRecordedAt ?? 0) < now.getTime() - 60_000) {
    found.usageRecordedAt = now.getTime();
    await touchPersonalAccessToken(ctx.db, found.credential.id, now);
  }
}

// Route scope lists are fixed per route and method: computed once, not per request.
const scopeLists = new Map<string, string[]>();
function allowedScopes(method: string, extras: string[] | undefined): string[] {
  const key = `${method} ${extras?.join(' ') ?? ''}`;
  let scopes = scopeLists.get(key);
  if (!scopes) {
    scopes = routeScopes(method, extras);
    scopeLists.set(key, scopes);
  }
  return scopes;
}

export async function authenticate(request: FastifyRequest): Promise<void> {
  const config = request.routeOptions.config;
  const ctx = request.server.kiln;
  const mode = config.auth ?? 'required';
  request.caller = null;
  const sudo = sudoIdentifier(request);

  const found = await findCredential(ctx, request, config.jobToken === true);
  if (!found) {
    if (sudo !== undefined || mode === 'required' || (mode === 'non_get' && !isRead(request.method))) throw unauthorized();
    return;
  }
  const now = new Date();
  checkValidity(ctx, found, now);
  const credential: Credential = found.credential;
  const tokenAuth = credential.kind !== 'session' && credential.kind !== 'job_token';
  if (credential.kind === 'impersonation_token' && !ctx.config.impersonationEnabled) throw invalidToken(IMPERSONATION_DISABLED);

  // The Service's order (lib/api/api_guard.rb, lib/api/helpers.rb current_user): the token's own
  // validity, then whether its owner may use the API, then sudo, and only then the route's scopes.
  const user = found.user;
  const denied = apiAccessDeniedReason(user, ctx.config.externalUrl, now);
  if (denied) throw forbidden(denied);

  let effective = user;
  if (sudo !== undefined) {
    if (!user.admin) throw forbidden('Must be admin to use sudo');
    if (!tokenAuth) throw forbidden('Must be authenticated using an OAuth or Personal Access Token to use sudo');
    if (!credential.scopes.includes('sudo')) throw insufficientScope(['sudo']);
    const target = await findUserByIdOrUsername(ctx.db, sudo);
    if (!target) throw notFound(`User with ID or username '${sudo}'`);
    effective = target;
  } else if (tokenAuth) {
    const allowed = allowedScopes(request.method, config.scopes);
    if (!allowed.some((s) => credential.scopes.includes(s))) throw insufficientScope(allowed);
  }
  await recordUse(ctx, found, now);
  request.caller = { user: effective, initialUser: user, credential, sudo: sudo !== undefined };
}
