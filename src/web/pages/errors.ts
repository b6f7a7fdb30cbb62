/**
 * The error pages of the web interface. 404 is also what a private object answers to anyone who
 * may not see it, so its text never hints that something exists; a signed-out visitor is offered
 * to sign in and come back (the object may be theirs to see).
 */
import { html, type SafeHtml } from '../html.ts';
import { frame, type SignedIn } from '../layout.ts';

const TEXT = {
  404: { title: 'Page Not Found', text: "Make sure the address is correct and the page hasn't moved." },
  403: { title: 'Forbidden', text: "You don't have the permission to access this page." },
} as const;

export function errorPage(status: 403 | 404, signedIn: SignedIn | null, returnTo: string): SafeHtml {
  const { title, text } = TEXT[status];
  return frame({
    title, signedIn, heading: false, narrow: true,
    body: html`<div class="error-page">
<p class="code-number">${status}</p>
<h1>${title}</h1>
<p>${text}</p>
${signedIn ? html`<p><a href="/">Go to your projects</a></p>`
    : html`<p><a href="/users/sign_in?return_to=${encodeURIComponent(returnTo.length <= 2048 ? returnTo : '/')}">Sign in</a> to see what your account may see.</p>`}
</div>`,
  });
}
