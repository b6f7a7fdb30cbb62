/**
 * Who is calling: the credential sources of the spec's Authentication table, tried in the
 * Service's order (reference §5.1), then token validity, the user's right to use the API, sudo
 * (reference §5.3) and the route's scopes (reference §5.2). Runs as a preValidation hook, so it
 * answers 401/403 before parameter validation answers 400 (reference §6.4).
 */
import type { FastifyRequest } from 'fastify';
import type { AuthMode, KilnContext, Credential } from '../context.ts';
import { digest } from '../../domain/tokens/secret.ts';
import {
  findOauthAccessTokenByDigest, findSessionByDigest, findTokenWithUser, touchPersonalAccessToken,
} from '../../domain/tokens/tokens.queries.ts';
import { findUserById, findUserByIdOrUsername, touchLastActivity } from '../../domain/users/users.queries.ts';
import { apiAccessDeniedReason } from '../../domain/users/user-kind.ts';
import { parseScopes, routeScopes } from '../../domain/auth/scopes.ts';
import { todayDate } from '../../domain/clock.ts';
import {
  forbidden, IMPERSONATION_DISABLED, insufficientScope, invalidToken, notFound, TOKEN_EXPIRED, TOKEN_REVOKED, unauthorized,
} from '../errors.ts';
import type { CachedCredential } from './cache.ts';
import { readCookie, SESSION_COOKIE, validCsrfToken } from './session-token.ts';

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
  const found = await findTokenWithUser(ctx.db, tokenDigest);
  if (!found) return null;
  const { token: row, user } = found;
  return {
    credential: { kind: row.impersonation ? 'impersonation_token' : 'personal_access_token', id: row.id, scopes: parseScopes(row.scopes) },
    user, expiresAt: row.expires_at, revoked: row.revoked === 1,
    lastUsedAt: row.last_used_at ? Date.parse(row.last_used_at) : 0,
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

/** A cached value, or the promise of one when the database must be asked. */
type Maybe<T> = T | Promise<T>;

function isPromise<T>(v: Maybe<T>): v is Promise<T> {
  return v instanceof Promise;
}

/**
 * Looks a token up by digest, from the cache when fresh; `kinds` limits where it may be found.
 * A cache hit answers synchronously: most authenticated requests never wait on a promise here.
 */
function resolveToken(ctx: KilnContext, raw: string, kinds: { pat: boolean; oauth: boolean }): Maybe<CachedCredential | null> {
  const tokenDigest = digest(raw);
  const key = `t:${tokenDigest}`;
  const cached = ctx.authCache.get(key);
  if (cached) {
    const isPat = cached.credential.kind !== 'oauth_token';
    return (isPat && kinds.pat) || (!isPat && kinds.oauth) ? cached : null;
  }
  return (async () => {
    const found = (kinds.pat ? await loadPersonalAccessToken(ctx, tokenDigest) : null)
      ?? (kinds.oauth ? await loadOauthToken(ctx, tokenDigest) : null);
    if (found) ctx.authCache.set(key, found);
    return found;
  })();
}

function resolveSession(ctx: KilnContext, request: FastifyRequest): Maybe<CachedCredential | null> {
  const raw = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (!raw) return null;
  // Cookie sessions act only for reads, or for writes that prove they come from our own pages.
  if (!isRead(request.method) && !validCsrfToken(ctx.secretKeyBase, raw, header(request, 'x-csrf-token'))) return null;
  const sessionDigest = digest(raw);
  const key = `s:${sessionDigest}`;
  const cached = ctx.authCache.get(key);
  if (cached) return cached;
  return (async () => {
    const session = await findSessionByDigest(ctx.db, sessionDigest);
    if (!session || session.expires_at <= new Date().toISOString()) return null;
    const user = await findUserById(ctx.db, session.user_id);
    if (!user) return null;
    const found: CachedCredential = {
      credential: { kind: 'session', id: session.id, scopes: [] },
      user,
      expiresAt: session.expires_at,
      revoked: false,
    };
    ctx.authCache.set(key, found);
    return found;
  })();
}

async function resolveJobToken(ctx: KilnContext, raw: string): Promise<CachedCredential | null> {
  if (!ctx.jobTokens) return null;
  const job = await ctx.jobTokens(ctx.db, raw);
  if (!job) return null;
  const user = await findUserById(ctx.db, job.userId);
  if (!user) return null;
  return { credential: { kind: 'job_token', id: job.jobId, jobId: job.jobId, scopes: [] }, user, expiresAt: null, revoked: false };
}

function required(found: Maybe<CachedCredential | null>): Maybe<CachedCredential> {
  const check = (f: CachedCredential | null): CachedCredential => {
    if (!f) throw unauthorized();
    return f;
  };
  return isPromise(found) ? found.then(check) : check(found);
}

/** The PRIVATE-TOKEN, Bearer/access-token and session sources, in the Service's order. */
function findUserCredential(ctx: KilnContext, request: FastifyRequest, bearerToken: string | undefined): Maybe<CachedCredential | null> {
  const privateToken = header(request, 'private-token') ?? param(request, 'private_token');
  if (privateToken) return required(resolveToken(ctx, privateToken, { pat: true, oauth: false }));
  const accessToken = bearerToken ?? param(request, 'access_token') ?? param(request, 'bearer_token');
  if (accessToken) return required(resolveToken(ctx, accessToken, { pat: true, oauth: true }));
  return resolveSession(ctx, request);
}

/** Finds the credential the request presents; throws 401 when one is presented but unknown. */
function findCredential(ctx: KilnContext, request: FastifyRequest, jobTokenRoute: boolean): Maybe<CachedCredential | null> {
  const bearerToken = bearer(request);
  if (jobTokenRoute) {
    const jobToken = header(request, 'job-token') ?? param(request, 'job_token') ?? param(request, 'token') ?? bearerToken;
    if (jobToken) {
      return resolveJobToken(ctx, jobToken).then((found) => {
        if (found) return found;
        if (!bearerToken || jobToken !== bearerToken) throw unauthorized();
        return findUserCredential(ctx, request, bearerToken);
      });
    }
  }
  return findUserCredential(ctx, request, bearerToken);
}

function checkValidity(found: CachedCredential, now: Date): void {
  const kind = found.credential.kind;
  if (kind === 'session' || kind === 'job_token') return;
  if (found.expiresAt !== null) {
    // Personal access tokens expire at the start of their expiry date (UTC); OAuth tokens at an instant.
    const expired = kind === 'oauth_token' ? found.expiresAt <= now.toISOString() : found.expiresAt <= todayDate(now);
    if (expired) throw invalidToken(TOKEN_EXPIRED);
  }
  if (found.revoked) throw invalidToken(TOKEN_REVOKED);
}

/**
 * How often a personal access token's last_used_at is written: as the Service's
 * PersonalAccessTokens::LastUsedService, at most every 10 minutes. Each write moves the write
 * epoch (db/write-epoch.ts), so writing on every request would empty the read caches.
 */
const TOKEN_USAGE_INTERVAL_MS = 10 * 60_000;

/** Records activity (once a day per user) and token use (every 10 minutes); nothing to wait for on most requests. */
function recordUse(ctx: KilnContext, found: CachedCredential, now: Date): Promise<void> | undefined {
  const today = todayDate(now);
  const touchUser = found.activityRecordedOn !== today && found.user.last_activity_on !== today;
  found.activityRecordedOn = today;
  const kind = found.credential.kind;
  let touchToken = false;
  if (kind === 'personal_access_token' || kind === 'impersonation_token') {
    // The later of this process's own last write and the value read with the token (which
    // another process may have written), so that neither a cache expiry nor a restart writes early.
    const id = found.credential.id;
    const written = Math.max(ctx.authCache.usageWrittenAt(id) ?? 0, found.lastUsedAt ?? 0);
    touchToken = written <= now.getTime() - TOKEN_USAGE_INTERVAL_MS;
    if (touchToken) ctx.authCache.noteUsageWritten(id, now.getTime());
  }
  if (!touchUser && !touchToken) return undefined;
  return (async () => {
    if (touchUser) await touchLastActivity(ctx.db, found.user.id, now);
    if (touchToken) await touchPersonalAccessToken(ctx.db, found.credential.id, now, TOKEN_USAGE_INTERVAL_MS);
  })();
}

/** What authentication needs of a route, worked out once when the route is registered. */
export interface RouteAuth {
  mode: AuthMode;
  jobToken: boolean;
  /** Scopes accepted per HTTP method of the route (reference §5.2). */
  scopes: Record<string, string[]>;
}

export function routeAuth(config: { auth?: AuthMode; jobToken?: boolean; scopes?: string[] }, methods: string[]): RouteAuth {
  const scopes: Record<string, string[]> = {};
  for (const m of methods) scopes[m] = routeScopes(m, config.scopes);
  return { mode: config.auth ?? 'required', jobToken: config.jobToken === true, scopes };
}

/**
 * Sets `request.caller`, or throws the Service's 401/403. Returns a promise only when it must wait
 * on the database (a credential not in the cache, sudo, a daily activity write).
 */
export function authenticate(request: FastifyRequest, route: RouteAuth): Promise<void> | undefined {
  const ctx = request.server.kiln;
  request.caller = null;
  const sudo = sudoIdentifier(request);
  const found = findCredential(ctx, request, route.jobToken);
  if (isPromise(found)) return found.then((f) => authorize(ctx, request, route, sudo, f));
  return authorize(ctx, request, route, sudo, found);
}

function authorize(
  ctx: KilnContext, request: FastifyRequest, route: RouteAuth, sudo: string | undefined, found: CachedCredential | null,
): Promise<void> | undefined {
  if (!found) {
    if (sudo !== undefined || route.mode === 'required' || (route.mode === 'non_get' && !isRead(request.method))) throw unauthorized();
    return undefined;
  }
  const now = new Date();
  checkValidity(found, now);
  const credential: Credential = found.credential;
  const tokenAuth = credential.kind !== 'session' && credential.kind !== 'job_token';
  if (credential.kind === 'impersonation_token' && !ctx.config.impersonationEnabled) throw invalidToken(IMPERSONATION_DISABLED);

  // The Service's order (lib/api/api_guard.rb, lib/api/helpers.rb current_user): the token's own
  // validity, then whether its owner may use the API, then sudo, and only then the route's scopes.
  const user = found.user;
  const denied = apiAccessDeniedReason(user, ctx.config.externalUrl, now);
  if (denied) throw forbidden(denied);

  if (sudo !== undefined) {
    if (!user.admin) throw forbidden('Must be admin to use sudo');
    if (!tokenAuth) throw forbidden('Must be authenticated using an OAuth or Personal Access Token to use sudo');
    if (!credential.scopes.includes('sudo')) throw insufficientScope(['sudo']);
    return (async () => {
      const target = await findUserByIdOrUsername(ctx.db, sudo);
      if (!target) throw notFound(`User with ID or username '${sudo}'`);
      await recordUse(ctx, found, now);
      request.caller = { user: target, initialUser: user, credential, sudo: true };
    })();
  }
  if (tokenAuth) {
    const allowed = route.scopes[request.method] ?? routeScopes(request.method);
    if (!allowed.some((s) => credential.scopes.includes(s))) throw insufficientScope(allowed);
  }
  const caller = { user, initialUser: user, credential, sudo: false };
  const writing = recordUse(ctx, found, now);
  if (!writing) {
    request.caller = caller;
    return undefined;
  }
  return writing.then(() => {
    request.caller = caller;
  });
}
