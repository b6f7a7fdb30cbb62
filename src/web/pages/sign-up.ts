/** The sign-up form (the Service's registrations/new): `new_user[name|username|email|password]`. */
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { CSRF_FIELD } from '../session.ts';

export interface SignUpTyped { name?: string; username?: string; email?: string }

export function signUpPage(o: { csrfToken: string; typed?: SignUpTyped; errors?: string[] }): SafeHtml {
  const t = o.typed ?? {};
  return page({
    title: 'Register',
    body: html`
${o.errors?.length ? html`<div class="alert" role="alert"><ul>${o.errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<form method="post" action="/users" id="new_new_user">
<input type="hidden" name="${CSRF_FIELD}" value="${o.csrfToken}">
<label for="new_user_name">Full name</label>
<input type="text" id="new_user_name" name="new_user[name]" value="${t.name ?? ''}" autocomplete="name" maxlength="255" required>
<label for="new_user_username">Username</label>
<input type="text" id="new_user_username" name="new_user[username]" value="${t.username ?? ''}" autocomplete="username" maxlength="255" required>
<label for="new_user_email">Email</label>
<input type="email" id="new_user_email" name="new_user[email]" value="${t.email ?? ''}" autocomplete="email" maxlength="255" required>
<label for="new_user_password">Password</label>
<input type="password" id="new_user_password" name="new_user[password]" autocomplete="new-password" minlength="8" maxlength="128" required>
<button type="submit" name="commit" value="Register">Register</button>
</form>
<p>Already have an account? <a href="/users/sign_in">Sign in</a></p>`,
  });
}
