/**
 * The browser side of signing in: the `_service_session` cookie (HttpOnly, SameSite=Lax, Secure
 * when kiln is served over https), the signed-in user it stands for, the CSRF tokens of forms,
 * and where a sign-in may send the browser back to.
 *
 * Forms of a signed-in user carry `csrfTokenFor(session)`. The sign-in form has no session yet,
 * so it uses a pre-session cookie `_service_csrf` holding a random value and the form carries the
 * HMAC of it (double-submit bound to the instance secret): a cross-site page can neither read the
 * cookie nor compute the token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KilnContext } from '../http/context.ts';
import type { UserRow } from '../db/types.ts';
import { csrfTokenFor, SESSION_COOKIE, validCsrfToken } from '../http/auth/session-token.ts';
import { digest, generateHexToken } from '../domain/tokens/secret.ts';
import { findLiveSession } from '../domain/oauth/oauth.queries.ts';
import { findUserById } from '../domain/users/users.queries.ts';
import { isBlockedState, isInternal } from '../domain/users/user-kind.ts';
import { CSRF_FIELD, redirect } from './layout.ts';

export const PRE_SESSION_COOKIE = '_service_csrf';
export { CSRF_FIELD };

export interface WebSession {
  id: number;
  raw: string;
  user: UserRow;
  csrfToken: string;
}

export function cookieOptions(ctx: KilnContext, expires?: Date) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.config.externalUrl.startsWith('https:'),
    ...(expires ? { expires } : {}),
  };
}

/** The signed-in user of this request, or null. Blocked users are signed out in effect. */
export async function currentSession(ctx: KilnContext, request: FastifyRequest): Promise<WebSession | null> {
  const raw = request.cookies?.[SESSION_COOKIE];
  if (!raw) return null;
  const session = await findLiveSession(ctx.db, digest(raw), new Date().toISOString());
  if (!session) return null;
  const user = await findUserById(ctx.db, session.user_id);
  if (!user || isInternal(user) || isBlockedState(user.state) || user.state === 'blocked_pending_approval') return null;
  return { id: session.id, raw, user, csrfToken: csrfTokenFor(ctx.secretKeyBase, raw) };
}

function formField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

export function validSessionCsrf(ctx: KilnContext, request: FastifyRequest, session: WebSession): boolean {
  return validCsrfToken(ctx.secretKeyBase, session.raw, formField(request, CSRF_FIELD));
}

const preSessionKey = (raw: string) => `pre-session:${raw}`;

/** The sign-in form's CSRF token, setting the pre-session cookie when the browser has none. */
export function preSessionCsrfToken(ctx: KilnContext, request: FastifyRequest, reply: FastifyReply): string {
  let raw = request.cookies?.[PRE_SESSION_COOKIE];
  if (!raw || !/^[0-9a-f]{64}$/.test(raw)) {
    raw = generateHexToken();
    reply.setCookie(PRE_SESSION_COOKIE, raw, cookieOptions(ctx));
  }
  return csrfTokenFor(ctx.secretKeyBase, preSessionKey(raw));
}

export function validPreSessionCsrf(ctx: KilnContext, request: FastifyRequest): boolean {
  const raw = request.cookies?.[PRE_SESSION_COOKIE];
  return !!raw && validCsrfToken(ctx.secretKeyBase, preSessionKey(raw), formField(request, CSRF_FIELD));
}

/**
 * A return address after sign-in, only when it is a path on this server (no open redirect:
 * RFC 9700 §4.11). The value is normalised first (dot segments resolved, as the browser will
 * resolve them) and the normalised path is what is checked and returned: `/..//evil.example`
 * normalises to `//evil.example`, a scheme-relative address of another host. Only an absolute
 * path of kiln's own origin survives, without backslashes, white space or control characters
 * (browsers read `\` as `/`).
 */
export function safeReturnTo(ctx: KilnContext, value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_RETURN_TO || !sameOriginPath(value)) return null;
  let resolved: URL;
  let base: URL;
  try {
    base = new URL(ctx.config.externalUrl);
    resolved = new URL(value, base);
  } catch {
    return null;
  }
  if (resolved.origin !== base.origin) return null;
  const path = `${resolved.pathname}${resolved.search}`;
  return sameOriginPath(path) ? path : null;
}

/** Longer than any address kiln's own pages link to; more is not a path worth returning to. */
const MAX_RETURN_TO = 2048;

/** An absolute path that no browser reads as another host: one leading `/`, no `\`, no spaces or controls. */
function sameOriginPath(s: string): boolean {
  return s.startsWith('/') && !s.startsWith('//') && !/[\\\s\u0000-\u001f\u007f]/.test(s);
}

/** Sends an anonymous browser to sign in, to come back here afterwards. */
export function redirectToSignIn(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return redirect(reply, 'GET', `/users/sign_in?return_to=${encodeURIComponent(request.url)}`);
}
