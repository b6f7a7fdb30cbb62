/**
 * /profile/applications (CONTRACT §5, spec rule 8): every signed-in user registers, lists and
 * deletes their own OAuth applications and renews a secret. Every POST checks the session's CSRF
 * token; an application of another user is "not found" rather than "forbidden", so ids leak
 * nothing.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { KilnContext } from '../../http/context.ts';
import { createApplication } from '../../domain/oauth/create-application.ts';
import { deleteApplication } from '../../domain/oauth/delete-application.ts';
import { renewApplicationSecret } from '../../domain/oauth/renew-application-secret.ts';
import { findApplicationById, listApplicationsOwnedBy } from '../../domain/oauth/oauth.queries.ts';
import { redirect, sendPage } from '../layout.ts';
import { applicationPage, applicationsPage, type ApplicationForm } from '../pages/applications.ts';
import { messagePage } from '../pages/message.ts';
import { currentSession, redirectToSignIn, validSessionCsrf, type WebSession } from '../session.ts';
import { rejectForgedForm } from './sign-in.ts';
import { recordAuditEvent } from '../../domain/audit-events/record-audit-event.ts';
import { currentSettings } from '../../domain/settings/settings.ts';

const EMPTY_FORM: ApplicationForm = { name: '', redirectUri: '', scopes: [], confidential: true };

function formOf(request: FastifyRequest): ApplicationForm {
  const body = request.body as Record<string, unknown> | undefined;
  const f = body && typeof body.doorkeeper_application === 'object' && body.doorkeeper_application !== null
    ? body.doorkeeper_application as Record<string, unknown> : {};
  const confidential = Array.isArray(f.confidential) ? f.confidential.at(-1) : f.confidential;
  const scopes = Array.isArray(f.scopes) ? f.scopes : typeof f.scopes === 'string' ? f.scopes.split(/\s+/) : [];
  return {
    name: typeof f.name === 'string' ? f.name : '',
    redirectUri: typeof f.redirect_uri === 'string' ? f.redirect_uri : '',
    scopes: scopes.filter((s): s is string => typeof s === 'string' && s !== ''),
    confidential: confidential === '1' || confidential === 'true',
  };
}

const signedIn = (s: WebSession) => ({ username: s.user.username, csrfToken: s.csrfToken });

function notFoundPage(reply: FastifyReply, session: WebSession): FastifyReply {
  return sendPage(reply, 404, messagePage({
    title: 'Not found', message: 'The application could not be found.', signedIn: signedIn(session),
  }));
}

/** The session, or a redirect to sign in (GET) / a rejection (forged POST) already sent. */
async function sessionFor(ctx: KilnContext, request: FastifyRequest, reply: FastifyReply): Promise<WebSession | null> {
  const session = await currentSession(ctx, request);
  if (!session) {
    redirectToSignIn(request, reply);
    return null;
  }
  if (request.method === 'POST' && !validSessionCsrf(ctx, request, session)) {
    rejectForgedForm(reply);
    return null;
  }
  return session;
}

async function ownApplication(ctx: KilnContext, session: WebSession, rawId: string) {
  if (!/^\d{1,9}$/.test(rawId)) return undefined;
  const application = await findApplicationById(ctx.db, Number(rawId));
  return application && application.owner_id === session.user.id ? application : undefined;
}

/** An event about the signed-in user's own applications (audit events of the API's routes, src/http/audit.ts). */
function auditWeb(
  db: Parameters<typeof recordAuditEvent>[0], user: { id: number; name: string; username: string }, ip: string, message: string,
) {
  return recordAuditEvent(db, { id: user.id, name: user.name }, ip, {
    entityType: 'User', entityId: user.id, entityPath: user.username,
    target: { id: user.id, type: 'User', details: user.username }, message,
  });
}

const applications: FastifyPluginAsync = async (app) => {
  const ctx = app.kiln;
  const opts = { config: { web: true }, schema: { hide: true } };

  app.get('/profile/applications', opts, async (request, reply) => {
    const session = await sessionFor(ctx, request, reply);
    if (!session) return reply;
    const list = await listApplicationsOwnedBy(ctx.db, session.user.id);
    return sendPage(reply, 200, applicationsPage({ signedIn: signedIn(session), applications: list, form: EMPTY_FORM, errors: {} }));
  });

  app.post('/profile/applications', opts, async (request, reply) => {
    const session = await sessionFor(ctx, request, reply);
    if (!session) return reply;
    // user_oauth_applications off: only administrators register applications.
    if (!session.user.admin && !(await currentSettings(ctx.db)).user_oauth_applications) {
      return sendPage(reply, 403, messagePage({
        title: 'Not allowed', message: 'Registering OAuth applications is turned off on this instance.',
      }));
    }
    const form = formOf(request);
    const result = await createApplication(ctx.db, form, session.user.id);
    if (result.ok) await auditWeb(ctx.db, session.user, request.ip, `Created OAuth application ${result.value.application.name} (${result.value.application.id})`);
    if (!result.ok) {
      const list = await listApplicationsOwnedBy(ctx.db, session.user.id);
      return sendPage(reply, 422, applicationsPage({ signedIn: signedIn(session), applications: list, form, errors: result.errors }));
    }
    // The secret is shown on this response only; it is never stored in a readable form.
    return sendPage(reply, 201, applicationPage({
      signedIn: signedIn(session), application: result.value.application, secret: result.value.secret,
      notice: 'The application was created successfully.',
    }));
  });

  app.get<{ Params: { id: string } }>('/profile/applications/:id', opts, async (request, reply) => {
    const session = await sessionFor(ctx, request, reply);
    if (!session) return reply;
    const application = await ownApplication(ctx, session, request.params.id);
    if (!application) return notFoundPage(reply, session);
    return sendPage(reply, 200, applicationPage({ signedIn: signedIn(session), application, secret: null }));
  });

  app.post<{ Params: { id: string } }>('/profile/applications/:id/renew', opts, async (request, reply) => {
    const session = await sessionFor(ctx, request, reply);
    if (!session) return reply;
    const application = await ownApplication(ctx, session, request.params.id);
    if (!application) return notFoundPage(reply, session);
    const secret = await renewApplicationSecret(ctx.db, application.id);
    return sendPage(reply, 200, applicationPage({
      signedIn: signedIn(session), application, secret, notice: 'The secret was renewed; the old one no longer works.',
    }));
  });

  app.post<{ Params: { id: string } }>('/profile/applications/:id/delete', opts, async (request, reply) => {
    const session = await sessionFor(ctx, request, reply);
    if (!session) return reply;
    const application = await ownApplication(ctx, session, request.params.id);
    if (!application) return notFoundPage(reply, session);
    await deleteApplication(ctx.db, application.id);
    await auditWeb(ctx.db, session.user, request.ip, `Deleted OAuth application ${application.name} (${application.id})`);
    return redirect(reply, 'POST', '/profile/applications');
  });
};

export default applications;
