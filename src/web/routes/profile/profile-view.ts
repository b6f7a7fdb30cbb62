/**
 * What the signed-in user's own pages under /-/profile share (issue 33 item 6): the session they
 * need (anonymous browsers are sent to sign in and back, as the Service's profile controllers
 * do), the profile's navigation, and the messages of a form that failed.
 */
import type { UserRow } from '../../../db/types.ts';
import { recordAuditEvent } from '../../../domain/audit-events/record-audit-event.ts';
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, frame } from '../../layout.ts';
import type { PageRequest } from '../../router.ts';
import { redirectToSignIn } from '../../session.ts';

export interface Flash { notice?: SafeHtml | string; errors?: string[] }

export const ENTRIES: { segment: string; href: string; label: string }[] = [
  { segment: 'profile', href: '/-/profile', label: 'Profile' },
  { segment: 'emails', href: '/-/profile/emails', label: 'Emails' },
  { segment: 'preferences', href: '/-/profile/preferences', label: 'Preferences' },
  { segment: 'keys', href: '/-/profile/keys', label: 'SSH keys' },
  { segment: 'gpg_keys', href: '/-/profile/gpg_keys', label: 'GPG keys' },
  { segment: 'personal_access_tokens', href: '/-/profile/personal_access_tokens', label: 'Access tokens' },
  { segment: 'applications', href: '/profile/applications', label: 'Applications' },
];

/** A validation failure's messages as the API's 400 names them: `<field> <message>`. */
export const messages = (errors: Record<string, string[]>) =>
  Object.entries(errors).flatMap(([k, msgs]) => msgs.map((m) => `${k} ${m}`));

export type Form = Record<string, unknown>;
export const field = (f: Form, name: string): string | undefined => (typeof f[name] === 'string' ? f[name] as string : undefined);
export const formOf = (p: PageRequest): Form => (p.request.body && typeof p.request.body === 'object' ? p.request.body as Form : {});

export const ID = /^\d{1,9}$/;

/** The signed-in user, or null after a redirect to sign in was sent (a GET; POSTs are guarded by the router). */
export function profileUser(p: PageRequest): UserRow | null {
  if (!p.session) {
    redirectToSignIn(p.request, p.reply);
    return null;
  }
  return p.session.user;
}

export function csrfInput(p: PageRequest): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">`;
}

export function flashOf(flash: Flash): SafeHtml {
  return html`${flash.notice ? html`<div class="notice" role="status">${flash.notice}</div>` : ''}
${flash.errors?.length ? html`<div class="alert" role="alert"><ul>${flash.errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}`;
}

export function profileFrame(p: PageRequest, o: { title: string; active: string; body: SafeHtml }): SafeHtml {
  const sidebar = html`<nav class="sidebar" aria-label="User settings">
<ul>${ENTRIES.map((e) => html`<li><a href="${e.href}"${e.segment === o.active ? html` aria-current="page"` : ''}>${e.label}</a></li>`)}</ul>
</nav>`;
  return frame({
    title: o.title, body: o.body, signedIn: p.signedIn, sidebar,
    breadcrumbs: [{ text: 'User settings' }, { text: o.title }],
  });
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A form's `<input type="date">`: '' is none, a real calendar date is kept, anything else is undefined (invalid). */
export function dateField(value: string | undefined): string | null | undefined {
  if (value === undefined || value === '') return null;
  if (!DATE.test(value)) return undefined;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value) ? value : undefined;
}

/** An audit event about the signed-in user, as the API's routes record about a user (http/audit.ts auditUser). */
export function auditOwn(p: PageRequest, user: UserRow, message: string): Promise<void> {
  return recordAuditEvent(p.ctx.db, { id: user.id, name: user.name }, p.request.ip, {
    entityType: 'User', entityId: user.id, entityPath: user.username,
    target: { id: user.id, type: 'User', details: user.username }, message,
  });
}
