/**
 * /profile/applications (CONTRACT §5): the signed-in user's OAuth applications. Field names are
 * the Service's (`doorkeeper_application[...]`); the secret appears only on the page that answers
 * the registration or the renewal, never again.
 */
import type { OauthApplicationRow } from '../../db/types.ts';
import { OAUTH_SCOPES } from '../../domain/auth/scopes.ts';
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { CSRF_FIELD } from '../session.ts';
import { SCOPE_DESCRIPTIONS } from './consent.ts';

type SignedIn = { username: string; csrfToken: string };

export interface ApplicationForm {
  name: string;
  redirectUri: string;
  scopes: string[];
  confidential: boolean;
}

const FIELD_LABELS: Record<string, string> = { name: 'Name', redirect_uri: 'Redirect URI', scopes: 'Scopes' };

function errorList(errors: Record<string, string[]>): SafeHtml {
  const lines = Object.entries(errors).flatMap(([field, msgs]) => msgs.map((m) => `${FIELD_LABELS[field] ?? field} ${m}`));
  return lines.length === 0 ? html`` : html`<div class="alert" role="alert"><ul>${lines.map((l) => html`<li>${l}</li>`)}</ul></div>`;
}

function csrf(token: string): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

function newApplicationForm(csrfToken: string, form: ApplicationForm, errors: Record<string, string[]>): SafeHtml {
  return html`
<h2>Add new application</h2>
${errorList(errors)}
<form method="post" action="/profile/applications" id="new_application">
${csrf(csrfToken)}
<label for="doorkeeper_application_name">Name</label>
<input type="text" id="doorkeeper_application_name" name="doorkeeper_application[name]" value="${form.name}" required>
<label for="doorkeeper_application_redirect_uri">Redirect URI</label>
<textarea id="doorkeeper_application_redirect_uri" name="doorkeeper_application[redirect_uri]" rows="3" required>${form.redirectUri}</textarea>
<small>Use one line per URI</small>
<label><input type="hidden" name="doorkeeper_application[confidential]" value="0"><input type="checkbox" id="doorkeeper_application_confidential" name="doorkeeper_application[confidential]" value="1"${form.confidential ? html` checked` : ''}> Confidential</label>
<small>The application will be used where the client secret can be kept confidential. Native mobile apps and Single Page Apps are considered non-confidential.</small>
<fieldset><legend>Scopes</legend>
${OAUTH_SCOPES.map((s) => html`<label><input type="checkbox" id="doorkeeper_application_scopes_${s}" name="doorkeeper_application[scopes][]" value="${s}"${form.scopes.includes(s) ? html` checked` : ''}> <strong>${s}</strong> ${SCOPE_DESCRIPTIONS[s] ?? ''}</label>\n`)}
</fieldset>
<button type="submit" name="commit" value="Save application">Save application</button>
</form>`;
}

export function applicationsPage(o: {
  signedIn: SignedIn;
  applications: OauthApplicationRow[];
  form: ApplicationForm;
  errors: Record<string, string[]>;
  notice?: string;
}): SafeHtml {
  const rows = o.applications.map((a) => html`<tr>
<td><a href="/profile/applications/${a.id}">${a.name}</a></td>
<td>${a.redirect_uri.split('\n').map((u) => html`<code>${u}</code><br>`)}</td>
<td>${a.confidential ? 'Yes' : 'No'}</td>
<td><form class="inline" method="post" action="/profile/applications/${a.id}/delete">${csrf(o.signedIn.csrfToken)}<button type="submit">Destroy</button></form></td>
</tr>`);
  return page({
    title: 'Applications',
    signedIn: o.signedIn,
    body: html`
${o.notice ? html`<p class="notice">${o.notice}</p>` : ''}
<h2>Your applications</h2>
${o.applications.length === 0 ? html`<p>You don't have any applications.</p>` : html`<table id="applications">
<tr><th>Name</th><th>Callback URL</th><th>Confidential</th><th>Actions</th></tr>
${rows}
</table>`}
${newApplicationForm(o.signedIn.csrfToken, o.form, o.errors)}`,
  });
}

export function applicationPage(o: {
  signedIn: SignedIn; application: OauthApplicationRow; secret: string | null; notice?: string;
}): SafeHtml {
  const a = o.application;
  return page({
    title: `Application: ${a.name}`,
    signedIn: o.signedIn,
    body: html`
${o.notice ? html`<p class="notice">${o.notice}</p>` : ''}
<table>
<tr><th>Application ID</th><td><code id="application_id">${a.uid}</code></td></tr>
<tr><th>Secret</th><td>${o.secret
    ? html`<code id="secret">${o.secret}</code><br><small>This is the only time the secret is accessible. Copy the secret and store it securely.</small>`
    : html`<small>The secret is only shown when the application is created or its secret renewed.</small>`}</td></tr>
<tr><th>Callback URL</th><td>${a.redirect_uri.split('\n').map((u) => html`<code class="callback-url">${u}</code><br>`)}</td></tr>
<tr><th>Confidential</th><td>${a.confidential ? 'Yes' : 'No'}</td></tr>
<tr><th>Scopes</th><td>${a.scopes.split(' ').filter(Boolean).map((s) => html`<code>${s}</code> `)}</td></tr>
</table>
<form class="inline" method="post" action="/profile/applications/${a.id}/renew">${csrf(o.signedIn.csrfToken)}<button type="submit">Renew secret</button></form>
<form class="inline" method="post" action="/profile/applications/${a.id}/delete">${csrf(o.signedIn.csrfToken)}<button type="submit">Destroy</button></form>
<p><a href="/profile/applications">Back to applications</a></p>`,
  });
}
