/** A page that only says something: errors of the authorization endpoint, rejected forms. */
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';

export function messagePage(o: {
  title: string; heading?: string; message: string; signedIn?: { username: string; csrfToken: string } | null;
}): SafeHtml {
  return page({
    title: o.title,
    signedIn: o.signedIn ?? null,
    body: html`${o.heading ? html`<h2>${o.heading}</h2>` : ''}<p class="alert" role="alert">${o.message}</p>`,
  });
}

/** Doorkeeper's error page: "An error has occurred" with the error's description. */
export function oauthErrorPage(error: string, description: string): SafeHtml {
  return page({
    title: 'An error has occurred',
    body: html`<p class="alert" role="alert"><strong>${error}</strong>: ${description}</p>`,
  });
}
