/**
 * The frame of every page, and how a page is sent: HTML with the headers that keep it out of
 * frames (RFC 9700 §4.16 clickjacking), out of caches, and from leaking its URL (which may hold
 * an authorization request or code) in Referer headers (RFC 9700 §4.2.4). No external resources
 * are loaded; the style sheet is inline. The policy has no form-action: after the consent form,
 * the browser follows a redirect to the client's redirect URI, which may use any scheme.
 */
import type { FastifyReply } from 'fastify';
import { html, SafeHtml } from './html.ts';

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;background:#fafafa;color:#222}
header{background:#292961;color:#fff;padding:.6rem 1.2rem;display:flex;justify-content:space-between;align-items:center}
header a,header button{color:#fff}
main{max-width:44rem;margin:2rem auto;background:#fff;padding:1.5rem 2rem;border:1px solid #ddd;border-radius:6px}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=text],input[type=password],textarea{width:100%;box-sizing:border-box;padding:.4rem}
button{padding:.4rem 1rem;margin:.6rem .4rem 0 0;cursor:pointer}
.alert{background:#fdecea;border:1px solid #f5c2bd;padding:.6rem;margin-bottom:1rem}
.notice{background:#e8f4ea;border:1px solid #b9dcc0;padding:.6rem;margin-bottom:1rem}
code{background:#f0f0f0;padding:.1rem .3rem;word-break:break-all}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem;border-bottom:1px solid #eee}
form.inline{display:inline}
`;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in user's name and the sign-out form's CSRF token. */
  signedIn?: { username: string; csrfToken: string } | null;
}

export function page(o: PageOptions): SafeHtml {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${o.title} · kiln</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<header><strong>kiln</strong>${o.signedIn ? html`<span>${o.signedIn.username}
<form class="inline" method="post" action="/users/sign_out"><input type="hidden" name="authenticity_token" value="${o.signedIn.csrfToken}"><button type="submit">Sign out</button></form></span>` : ''}</header>
<main>
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>
`;
}

export function sendPage(reply: FastifyReply, status: number, content: SafeHtml): FastifyReply {
  return reply.code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(content.value);
}

/** 302 after a GET, 303 after a POST: never 307, which would resend credentials (RFC 9700 §4.12). */
export function redirect(reply: FastifyReply, method: string, location: string): FastifyReply {
  return reply.code(method === 'GET' || method === 'HEAD' ? 302 : 303)
    .header('location', location)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send();
}
