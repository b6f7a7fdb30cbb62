/**
 * Signing up (issue 33 item 1; the Service's RegistrationsController): GET /users/sign_up shows
 * the form and POST /users creates the account through domain/users/sign-up.ts (the sign-up
 * restrictions, then POST /users's rules). Both answer the 404 page while the `signup_enabled`
 * setting is off. The form carries the pre-session CSRF token, as the sign-in form does, and both
 * go through the same request throttle as sign-in (http/plugins/rate-limit.ts, the web's).
 *
 * After a sign-up the account is signed in with a new session, unless it awaits an
 * administrator's approval (require_admin_approval_after_user_signup), when Devise's message for
 * that says so and nobody is signed in. A signed-in visitor is sent to their dashboard, as
 * Devise's require_no_authentication does. A form that fails answers 400 with the model's
 * messages (`Email has already been taken`) and keeps what was typed but the password.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../http/auth/session-token.ts';
import { startSession } from '../../domain/oauth/sign-in.ts';
import { currentSettings } from '../../domain/settings/settings.ts';
import { signUpUser } from '../../domain/users/sign-up.ts';
import { PASSWORD_MAX } from '../../domain/users/user-attributes.ts';
import { isStorableText } from '../../db/constraints.ts';
import { redirect, sendPage } from '../layout.ts';
import { errorPage } from '../pages/errors.ts';
import { messagePage } from '../pages/message.ts';
import { signUpPage, type SignUpTyped } from '../pages/sign-up.ts';
import { cookieOptions, currentSession, PRE_SESSION_COOKIE, preSessionCsrfToken, validPreSessionCsrf } from '../session.ts';
import { rejectForgedForm } from './sign-in.ts';

/** Devise's registrations.signed_up_but_blocked_pending_approval, in the project's words. */
export const PENDING_APPROVAL_MESSAGE = 'You have signed up successfully. However, we could not sign you in because '
  + 'your account is awaiting approval from your Service administrator.';

const MAX_FIELD = 255;
const FIELD_LABELS: Record<string, string> = { name: 'Name', username: 'Username', email: 'Email', password: 'Password' };

function formFields(request: FastifyRequest): { name: string; username: string; email: string; password: string } {
  const body = request.body as Record<string, unknown> | undefined;
  const user = body && typeof body.new_user === 'object' && body.new_user !== null ? body.new_user as Record<string, unknown> : {};
  const text = (k: string) => (typeof user[k] === 'string' ? user[k] as string : '');
  return { name: text('name').trim(), username: text('username').trim(), email: text('email').trim(), password: text('password') };
}

/** `Email has already been taken`: the attribute's label, then its message, as the form shows errors. */
const fullMessages = (errors: Record<string, string[]>) =>
  Object.entries(errors).flatMap(([k, msgs]) => msgs.map((m) => `${FIELD_LABELS[k] ?? k} ${m}`));

const signUp: FastifyPluginAsync = async (app) => {
  const ctx = app.kiln;

  async function enabled(): Promise<boolean> {
    return (await currentSettings(ctx.db)).signup_enabled;
  }

  function notFound(request: FastifyRequest, reply: FastifyReply) {
    return sendPage(reply, 404, errorPage(404, null, request.url));
  }

  app.get('/users/sign_up', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    if (await currentSession(ctx, request)) return redirect(reply, 'GET', '/');
    if (!await enabled()) return notFound(request, reply);
    return sendPage(reply, 200, signUpPage({ csrfToken: preSessionCsrfToken(ctx, request, reply) }));
  });

  app.post('/users', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    if (!await enabled()) return notFound(request, reply);
    if (!validPreSessionCsrf(ctx, request)) return rejectForgedForm(reply);
    if (await currentSession(ctx, request)) return redirect(reply, 'POST', '/');
    const f = formFields(request);
    const typed = { name: f.name, username: f.username, email: f.email };
    const again = (errors: string[], keep: SignUpTyped = typed) =>
      sendPage(reply, 400, signUpPage({ csrfToken: preSessionCsrfToken(ctx, request, reply), typed: keep, errors }));

    // Bounded before anything reaches the database: the columns' lengths, and text a column can hold.
    const tooLong = (['name', 'username', 'email'] as const).filter((k) => f[k].length > MAX_FIELD).map((k) => FIELD_LABELS[k]!);
    if (f.password.length > PASSWORD_MAX) tooLong.push(FIELD_LABELS.password!);
    if (tooLong.length > 0) return again(tooLong.map((label) => `${label} is too long`), {});
    if (![f.name, f.username, f.email, f.password].every(isStorableText)) {
      return again(['The form holds characters that cannot be stored'], {});
    }

    const result = await signUpUser(ctx.db, f, { dataDir: ctx.config.dataDir });
    if (!result.ok) return again(fullMessages(result.errors));
    if (result.user.state === 'blocked_pending_approval') {
      return sendPage(reply, 200, messagePage({ title: 'Sign in', message: PENDING_APPROVAL_MESSAGE }));
    }
    const { rawSession, expiresAt } = await startSession(ctx.db, result.user.id, request.ip);
    reply.setCookie(SESSION_COOKIE, rawSession, cookieOptions(ctx, expiresAt));
    reply.clearCookie(PRE_SESSION_COOKIE, cookieOptions(ctx));
    return redirect(reply, 'POST', '/');
  });
};

export default signUp;
