/**
 * The frame of every page, and how a page is sent: HTML with the headers that keep it out of
 * frames (RFC 9700 §4.16 clickjacking), out of caches, and from leaking its URL (which may hold
 * an authorization request or code) in Referer headers (RFC 9700 §4.2.4).
 *
 * The frame: a top bar (kiln, Explore, the signed-in user's menu or a sign-in link), an optional
 * sidebar (a project's navigation, web/project-nav.ts) and the page. Styles and scripts come only
 * from kiln's own static files (web/assets.ts): the policy allows `'self'` and nothing inline, so
 * text that escaped into markup still could not run. The policy has no form-action: after the
 * consent form, the browser follows a redirect to the client's redirect URI, which may use any
 * scheme.
 */
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from './html.ts';
import { assetUrl } from './assets.ts';
import { broadcastParts } from './broadcast.ts';

/** The form field of every form's CSRF token, as the Service's (Rails' authenticity_token). */
export const CSRF_FIELD = 'authenticity_token';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'", "style-src 'self'", "script-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "frame-ancestors 'none'", "base-uri 'none'",
].join('; ');

/** Who is looking: the signed-in user's name and the CSRF token of their forms. */
export interface SignedIn { username: string; name?: string; csrfToken: string }

export interface Crumb { text: string; href?: string }

export interface FrameOptions {
  title: string;
  body: SafeHtml;
  signedIn?: SignedIn | null;
  /** The project's (or another area's) navigation, shown left of the page and above it on a phone. */
  sidebar?: SafeHtml | null;
  breadcrumbs?: Crumb[];
  /** Client scripts of src/web/assets/ by file name, loaded deferred. */
  scripts?: string[];
  /** A narrow column (forms, messages) instead of the full width. */
  narrow?: boolean;
  /** Whether the title is shown as the page's heading (pages with their own heading say false). */
  heading?: boolean;
}

function userMenu(signedIn: SignedIn | null | undefined): SafeHtml {
  if (!signedIn) return html`<a href="/users/sign_in" id="sign-in-link">Sign in</a>`;
  return html`<details class="usermenu"><summary id="user-menu">${signedIn.username}</summary>
<div class="menu">
<a href="/${signedIn.username}">Profile</a>
<a href="/-/profile">Settings</a>
<a href="/-/profile/keys">SSH keys</a>
<a href="/-/profile/personal_access_tokens">Access tokens</a>
<a href="/profile/applications">Applications</a>
<form method="post" action="/users/sign_out"><input type="hidden" name="${CSRF_FIELD}" value="${signedIn.csrfToken}"><button type="submit">Sign out</button></form>
</div></details>`;
}

export function frame(o: FrameOptions): SafeHtml {
  // The page request's broadcast messages (web/broadcast.ts): none outside a page request.
  const broadcast = broadcastParts();
  const scripts = broadcast.script ? [...(o.scripts ?? []), 'broadcast.js'] : o.scripts ?? [];
  const crumbs = o.breadcrumbs?.length
    ? html`<nav class="breadcrumbs" aria-label="Breadcrumbs">${o.breadcrumbs.map((c, i) => html`${i > 0 ? ' / ' : ''}${c.href ? html`<a href="${c.href}">${c.text}</a>` : c.text}`)}</nav>`
    : '';
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>${o.title} · kiln</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('kiln.css')}">
${broadcast.stylesheet ? html`<link rel="stylesheet" href="${broadcast.stylesheet}">` : ''}
${scripts.map((s) => html`<script src="${assetUrl(s)}" defer></script>`)}
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
${broadcast.banners}
<header class="topbar">
<a class="brand" href="/">kiln</a>
<nav aria-label="Main"><a href="/explore/projects">Explore</a></nav>
${userMenu(o.signedIn)}
</header>
<div class="frame">
${o.sidebar ?? ''}
<main id="content" class="content${o.narrow ? ' narrow' : ''}">
${crumbs}
${o.heading === false ? '' : html`<h1>${o.title}</h1>`}
${o.body}
</main>
</div>
${broadcast.notification}
</body>
</html>
`;
}

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in user's name and the sign-out form's CSRF token. */
  signedIn?: SignedIn | null;
}

/** A page of one narrow column: sign-in, consent, applications, messages. */
export function page(o: PageOptions): SafeHtml {
  return frame({ title: o.title, body: o.body, signedIn: o.signedIn ?? null, narrow: true });
}

export function sendPage(reply: FastifyReply, status: number, content: SafeHtml): FastifyReply {
  return pageHeaders(reply.code(status)).send(content.value);
}

/** A page sent as it is produced (a job's log streamed from disk), with every page's headers. */
export function sendPageParts(reply: FastifyReply, status: number, parts: Readable): FastifyReply {
  return pageHeaders(reply.code(status)).send(parts);
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
}

/** 302 after a GET, 303 after a POST: never 307, which would resend credentials (RFC 9700 §4.12). */
export function redirect(reply: FastifyReply, method: string, location: string): FastifyReply {
  return reply.code(method === 'GET' || method === 'HEAD' ? 302 : 303)
    .header('location', location)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send();
}
