/**
 * Signing in and out (CONTRACT §5): GET/POST /users/sign_in with `user[login]` (username or
 * email) and `user[password]`, POST /users/sign_out. Messages are Devise's as the Service shows
 * them. A successful sign-in always starts a new session secret (no session fixation) and
 * returns only to a path on this server.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../http/auth/session-token.ts';
import { authenticateUser, type AuthenticateFailure } from '../../domain/oauth/authenticate-user.ts';
import { startSession } from '../../domain/oauth/sign-in.ts';
import { currentSettings } from '../../domain/settings/settings.ts';
import { deleteSession } from '../../domain/oauth/oauth.queries.ts';
import { redirect, sendPage } from '../layout.ts';
import { signInPage } from '../pages/sign-in.ts';
import { messagePage } from '../pages/message.ts';
import {
  cookieOptions, currentSession, PRE_SESSION_COOKIE, preSessionCsrfToken, safeReturnTo, validPreSessionCsrf, validSessionCsrf,
} from '../session.ts';

export const DEFAULT_AFTER_SIGN_IN = '/profile/applications';

export const SIGN_IN_MESSAGES: Record<AuthenticateFailure | 'two_factor', string> = {
  invalid: 'Invalid login or password.',
  locked: 'Your account is locked.',
  blocked: 'Your account has been blocked. Please contact your Service administrator if you think this is an error.',
  pending_approval: 'Your account is pending approval from your administrator and hence blocked.',
  two_factor: 'Two-factor authentication is enabled for this account, and this server cannot verify a second factor.',
};

/** Rails' InvalidAuthenticityToken, as a page. */
export const CSRF_FAILED = "Can't verify CSRF token authenticity.";

function userFields(request: FastifyRequest): { login: string; password: string } {
  const body = request.body as Record<string, unknown> | undefined;
  const user = body && typeof body.user === 'object' && body.user !== null ? body.user as Record<string, unknown> : {};
  return {
    login: typeof user.login === 'string' ? user.login.trim() : '',
    password: typeof user.password === 'string' ? user.password : '',
  };
}

function returnToOf(request: FastifyRequest, ctx: Parameters<typeof safeReturnTo>[0]): string | null {
  const fromBody = (request.body as Record<string, unknown> | undefined)?.return_to;
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.return_to;
  return safeReturnTo(ctx, fromBody ?? fromQuery);
}

export function rejectForgedForm(reply: FastifyReply): FastifyReply {
  return sendPage(reply, 422, messagePage({ title: 'The change you requested was rejected', message: CSRF_FAILED }));
}

const signIn: FastifyPluginAsync = async (app) => {
  const ctx = app.kiln;

  app.get('/users/sign_in', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    const returnTo = returnToOf(request, ctx);
    if (await currentSession(ctx, request)) return redirect(reply, 'GET', returnTo ?? DEFAULT_AFTER_SIGN_IN);
    const signUp = (await currentSettings(ctx.db)).signup_enabled;
    return sendPage(reply, 200, signInPage({ csrfToken: preSessionCsrfToken(ctx, request, reply), returnTo, signUp }));
  });

  app.post('/users/sign_in', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    if (!validPreSessionCsrf(ctx, request)) return rejectForgedForm(reply);
    const returnTo = returnToOf(request, ctx);
    const { login, password } = userFields(request);
    // With password_authentication_enabled_for_web off no password signs in (nor counts as a failed attempt).
    const settings = await currentSettings(ctx.db);
    const allowed = settings.password_authentication_enabled_for_web;
    const result = allowed && login && password
      ? await authenticateUser(ctx.db, login, password)
      : { ok: false as const, reason: 'invalid' as const };
    let failure: keyof typeof SIGN_IN_MESSAGES | null = result.ok ? null : result.reason;
    if (result.ok && result.user.otp_required_for_login) failure = 'two_factor';
    if (failure || !result.ok) {
      return sendPage(reply, 401, signInPage({
        csrfToken: preSessionCsrfToken(ctx, request, reply), returnTo, login, alert: SIGN_IN_MESSAGES[failure ?? 'invalid'],
        signUp: settings.signup_enabled,
      }));
    }
    const { rawSession, expiresAt } = await startSession(ctx.db, result.user.id, request.ip);
    reply.setCookie(SESSION_COOKIE, rawSession, cookieOptions(ctx, expiresAt));
    reply.clearCookie(PRE_SESSION_COOKIE, cookieOptions(ctx));
    return redirect(reply, 'POST', returnTo ?? DEFAULT_AFTER_SIGN_IN);
  });

  app.post('/users/sign_out', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return redirect(reply, 'POST', '/users/sign_in');
    if (!validSessionCsrf(ctx, request, session)) return rejectForgedForm(reply);
    await deleteSession(ctx.db, session.id);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(ctx));
    return redirect(reply, 'POST', '/users/sign_in');
  });
};

export default signIn;
