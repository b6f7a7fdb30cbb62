/** The sign-in form (CONTRACT §5): fields `user[login]` and `user[password]`, as the Service's. */
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { CSRF_FIELD } from '../session.ts';

export function signInPage(o: {
  csrfToken: string; returnTo: string | null; login?: string; alert?: string; notice?: string; signUp?: boolean;
}): SafeHtml {
  return page({
    title: 'Sign in',
    body: html`
${o.alert ? html`<p class="alert" role="alert">${o.alert}</p>` : ''}
${o.notice ? html`<p class="notice">${o.notice}</p>` : ''}
<form method="post" action="/users/sign_in" id="new_user">
<input type="hidden" name="${CSRF_FIELD}" value="${o.csrfToken}">
${o.returnTo ? html`<input type="hidden" name="return_to" value="${o.returnTo}">` : ''}
<label for="user_login">Username or email</label>
<input type="text" id="user_login" name="user[login]" value="${o.login ?? ''}" autocomplete="username" autofocus required>
<label for="user_password">Password</label>
<input type="password" id="user_password" name="user[password]" autocomplete="current-password" required>
<button type="submit" name="commit" value="Sign in">Sign in</button>
</form>
${o.signUp ? html`<p>Don't have an account yet? <a href="/users/sign_up" id="register-link">Register now</a></p>` : ''}`,
  });
}
