/**
 * The consent page of /oauth/authorize (CONTRACT §5): the application's name, the scopes it asks
 * for, and Authorize / Deny. Both forms carry the whole authorization request again (it is checked
 * again on submit) and the session's CSRF token.
 */
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { CSRF_FIELD } from '../session.ts';

/** What each scope lets the application do, in the Service's words. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  api: 'Grants complete read/write access to the API, including all groups and projects.',
  read_api: 'Grants read access to the API, including all groups and projects.',
  read_user: 'Grants read-only access to your profile through the /user API endpoint.',
  read_repository: 'Grants read-only access to repositories on private projects using Git-over-HTTP.',
  write_repository: 'Grants read-write access to repositories on private projects using Git-over-HTTP.',
  sudo: 'Grants permission to perform API actions as any user in the system, when authenticated as an admin user.',
  openid: 'Grants permission to authenticate with the Service using OpenID Connect.',
  profile: 'Grants read-only access to the user\'s profile data using OpenID Connect.',
  email: 'Grants read-only access to the user\'s primary email address using OpenID Connect.',
};

export interface ConsentRequest {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  scope: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  nonce?: string;
}

function hiddenFields(csrfToken: string, r: ConsentRequest): SafeHtml {
  const fields = Object.entries(r).filter(([, v]) => typeof v === 'string' && v !== '');
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}">
${fields.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v as string}">\n`)}`;
}

export function consentPage(o: {
  applicationName: string;
  scopes: string[];
  request: ConsentRequest;
  csrfToken: string;
  username: string;
}): SafeHtml {
  return page({
    title: 'Authorization required',
    signedIn: { username: o.username, csrfToken: o.csrfToken },
    body: html`
<p>Authorize <strong id="application-name">${o.applicationName}</strong> to use your account?</p>
<p>This application will be able to:</p>
<ul id="scopes">
${o.scopes.map((s) => html`<li><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s] ?? s}</li>\n`)}
</ul>
<form class="inline" method="post" action="/oauth/authorize">
${hiddenFields(o.csrfToken, o.request)}
<button type="submit" name="commit" value="Authorize">Authorize</button>
</form>
<form class="inline" method="post" action="/oauth/authorize">
${hiddenFields(o.csrfToken, o.request)}
<input type="hidden" name="_method" value="delete">
<button type="submit" name="commit" value="Deny">Deny</button>
</form>`,
  });
}
