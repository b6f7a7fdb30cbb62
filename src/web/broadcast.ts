/**
 * Broadcast messages on every page (issue 33 item 6; the Service's BroadcastMessagesHelper and
 * BroadcastMessage.current_banner_messages / current_notification_messages, 15.2): the messages
 * of GET /broadcast_messages that are current now, each at most once per page:
 *
 * - `target_path` is a pattern over the page's path (`*` any text, no regard to case, the whole
 *   path), matched without a regular expression so no pattern can make it slow (domain/wildcard.ts);
 * - `target_access_levels`, when given, must hold the viewer's highest membership of the page's
 *   project or group — only on a project's or group's pages, only for a signed-in viewer and only
 *   while the `role_targeted_broadcast_messages` flag is on (off by default in 15.2, so by default
 *   a targeted message shows nowhere, as there);
 * - a message whose `hide_broadcast_message_<id>` cookie is set is not shown: the close button of
 *   a dismissable banner (and of every notification) sets it until the message ends
 *   (assets/broadcast.js), as the Service's script does.
 *
 * Banners go above the top bar, every one of them; of the notifications only the last is shown,
 * at the page's foot. The text goes through the API's sanitising Markdown renderer; a banner's
 * colour and font colour come from a stylesheet of the current messages
 * (`/-/broadcast_messages.css`), never from a style attribute, which the policy forbids.
 *
 * The messages are read and rendered once per write epoch (db/read-cache.ts) for all pages; what
 * a page does per request is the filtering above. frame() is synchronous, so every page route's
 * handler runs with the page's context in an AsyncLocalStorage (`withBroadcasts`, put there by
 * web/page-broadcasts.ts for the router's pages and the routes outside it alike) and frame()
 * reads it (`broadcastParts`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { BroadcastMessageRow } from '../db/tables/instance-administration.ts';
import { cachedReadNow } from '../db/read-cache.ts';
import { currentAndFutureBroadcastMessages } from '../domain/broadcast-messages/broadcast-messages.queries.ts';
import { featureEnabled } from '../domain/features/features.ts';
import type { Actor } from '../domain/permissions/access.ts';
import { isoMillis, nowIso } from '../domain/clock.ts';
import type { MarkdownRenderer } from '../domain/markdown/render-pool.ts';
import { wildcardMatches } from '../domain/wildcard.ts';
import { html, SafeHtml } from './html.ts';

/** Most messages that have not ended read for the pages (the Service reads them all; a few are usual). */
const MAX_MESSAGES = 50;
/** ColorValidator's form: only such a value ever reaches the stylesheet. */
const COLOR = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;
export const ROLE_TARGETED_FLAG = 'role_targeted_broadcast_messages';

export interface ShownMessage {
  id: number;
  /** The message through the sanitising renderer. */
  html: string;
  startsAt: number;
  endsAt: number;
  endsAtIso: string;
  color: string | null;
  font: string | null;
  targetPath: string | null;
  targetLevels: number[];
  type: 'banner' | 'notification';
  dismissable: boolean;
}

export interface Broadcasts {
  messages: ShownMessage[];
  /** The stylesheet of the messages' colours, and its address (its content's hash in the query). */
  css: string;
  cssUrl: string;
}

/** What one page request needs to choose its messages. */
export interface BroadcastContext {
  all: Broadcasts;
  path: string;
  cookies: Record<string, string | undefined>;
  /** Whether targeted messages may match at all (one exists and the flag is on). */
  targeting: boolean;
  /**
   * The signed-in viewer's highest membership of the page's project or group, once the router
   * knows it; null on every other page and for a signed-out visitor, who has no role.
   */
  accessLevel: number | null;
}

const EMPTY: Broadcasts = { messages: [], css: '', cssUrl: '' };

function stylesheet(messages: ShownMessage[]): string {
  return messages.filter((m) => m.type === 'banner').map((m) => {
    const bg = m.color && COLOR.test(m.color) ? `background-color:${m.color};` : '';
    const fg = m.font && COLOR.test(m.font) ? `color:${m.font};` : '';
    return `.broadcast-banner.bm-${m.id}{${bg}${fg}}${fg ? `.broadcast-banner.bm-${m.id} a{${fg}}` : ''}\n`;
  }).join('');
}

async function readBroadcasts(db: Kysely<DB>, markdown: MarkdownRenderer, ownHost: string): Promise<Broadcasts> {
  const rows: BroadcastMessageRow[] = await currentAndFutureBroadcastMessages(db, nowIso(), MAX_MESSAGES);
  if (rows.length === 0) return EMPTY;
  const messages = await Promise.all(rows.map(async (r): Promise<ShownMessage> => ({
    id: r.id,
    html: await markdown.render(r.message, { gfm: true, ownHost }),
    startsAt: isoMillis(r.starts_at), endsAt: isoMillis(r.ends_at), endsAtIso: r.ends_at,
    color: r.color, font: r.font, targetPath: r.target_path && r.target_path !== '' ? r.target_path : null,
    targetLevels: (r.target_access_levels ?? '').split(' ').filter((s) => /^\d+$/.test(s)).map(Number),
    type: r.broadcast_type === 'notification' ? 'notification' : 'banner',
    dismissable: r.dismissable === 1,
  })));
  const css = stylesheet(messages);
  const hash = crypto.createHash('sha256').update(css).digest('hex').slice(0, 16);
  return { messages, css, cssUrl: `/-/broadcast_messages.css?v=${hash}` };
}

/** The messages that have not ended, rendered: remembered until the next write (2 s at most). */
export function loadBroadcasts(db: Kysely<DB>, markdown: MarkdownRenderer, ownHost: string): Broadcasts | Promise<Broadcasts> {
  return cachedReadNow(db, 'web:broadcast-messages', () => readBroadcasts(db, markdown, ownHost));
}

/** A page's context: whether targeted messages can match needs the flag, asked only when one exists. */
export async function broadcastContext(
  db: Kysely<DB>, all: Broadcasts, path: string, cookies: Record<string, string | undefined>,
): Promise<BroadcastContext> {
  const targeting = all.messages.some((m) => m.targetLevels.length > 0) && await featureEnabled(db, ROLE_TARGETED_FLAG);
  return { all, path, cookies, targeting, accessLevel: null };
}

/**
 * Whether a page's path matches a message's target_path (matches_current_path): only the path
 * gains a leading slash (the Service's fix for callers without one); the pattern is taken as
 * written, so one that starts with a star may match any project's page.
 */
export const pathMatches = (pattern: string, path: string) => wildcardMatches(pattern, path.startsWith('/') ? path : `/${path}`);

function shownTo(m: ShownMessage, c: BroadcastContext, now: number): boolean {
  if (!(m.startsAt <= now && now <= m.endsAt)) return false;
  if (m.targetLevels.length > 0 && !(c.targeting && c.accessLevel !== null && m.targetLevels.includes(c.accessLevel))) return false;
  if (m.targetPath !== null && !pathMatches(m.targetPath, c.path)) return false;
  return !c.cookies[`hide_broadcast_message_${m.id}`];
}

const storage = new AsyncLocalStorage<BroadcastContext>();

/** Runs a page's handler with its broadcast context, for frame() to read. */
export function withBroadcasts<T>(context: BroadcastContext, fn: () => T): T {
  return storage.run(context, fn);
}

/**
 * Sets the viewer's membership of the page's project or group, once the router has found it. A
 * signed-out visitor has no role (the Service asks current_user's membership), so no targeted
 * message is theirs.
 */
export function setBroadcastAccessLevel(actor: Actor): void {
  const c = storage.getStore();
  if (c && actor.user) c.accessLevel = actor.accessLevel;
}

/** The current messages' stylesheet (empty outside a page request). */
export function broadcastStylesheet(): string {
  return storage.getStore()?.all.css ?? '';
}

export interface BroadcastParts {
  banners: SafeHtml | '';
  notification: SafeHtml | '';
  stylesheet: string | null;
  script: boolean;
}

const NONE: BroadcastParts = { banners: '', notification: '', stylesheet: null, script: false };

function closeButton(m: ShownMessage): SafeHtml {
  return html`<button type="button" class="broadcast-dismiss" data-id="${m.id}" data-expires="${m.endsAtIso}" aria-label="Close" hidden>×</button>`;
}

/** The current page's messages as markup (none outside a page request). */
export function broadcastParts(now = Date.now()): BroadcastParts {
  const c = storage.getStore();
  if (!c || c.all.messages.length === 0) return NONE;
  const shown = c.all.messages.filter((m) => shownTo(m, c, now));
  if (shown.length === 0) return NONE;
  const banners = shown.filter((m) => m.type === 'banner');
  const notification = shown.filter((m) => m.type === 'notification').at(-1);
  return {
    banners: banners.length === 0 ? '' : html`<div class="broadcasts">${banners.map((m) => html`<div class="broadcast broadcast-banner bm-${m.id}" id="broadcast-message-${m.id}" role="status">
<div class="broadcast-text">${new SafeHtml(m.html)}</div>${m.dismissable ? closeButton(m) : ''}</div>`)}</div>`,
    notification: notification ? html`<div class="broadcast broadcast-notification" id="broadcast-message-${notification.id}" role="status">
<div class="broadcast-text">${new SafeHtml(notification.html)}</div>${closeButton(notification)}</div>` : '',
    stylesheet: banners.length > 0 && c.all.css !== '' ? c.all.cssUrl : null,
    script: notification !== undefined || banners.some((m) => m.dismissable),
  };
}
