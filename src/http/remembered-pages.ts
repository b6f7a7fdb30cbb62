/**
 * Whole answers of the hottest lists (users, a project's jobs and pipelines), remembered as the
 * text they were sent as, by the rule remembered rows follow (db/read-cache.ts): until the next
 * write through the app's database handle, and for at most its TTL, which bounds how long a write
 * by another server process can go unseen. Clients poll these lists (dashboards, CI monitors,
 * bots); computing a page costs 200–450 µs of CPU and answering a remembered one a tenth of that
 * (issue 17, item 1).
 *
 * A handler asks `answer` once its own refusals are decided (access, rate limits), so a
 * remembered page never skips a check; it is keyed by the route, the request's path and query,
 * and who asks (credential and effective user, so sudo and scopes are part of it). Values that
 * depend on the clock (a running job's duration, a waiting job's queued_duration) are not frozen:
 * such items are kept as objects and their ticking fields are recomputed for every answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerEpoch, rememberAnswer, rememberedAnswer } from '../db/read-cache.ts';
import { checkingSerializers } from './entities/serializers.ts';

/** What pagination.ts sets on a page; the rest of an answer's headers belong to its request. */
const PAGE_HEADERS = ['link', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages'] as const;
// request-defaults.ts writes it without a charset, as the Service does.
const JSON_TYPE = 'application/json';

/** An item whose fields move with the clock: `tick` brings them up to date before it is written. */
interface Ticking { item: object; tick: (item: object) => void }

interface Page {
  headers: [string, string][];
  /** The answer as sent, when nothing in it ticks; otherwise its items, ticking ones as objects. */
  body: string | null;
  pieces: (string | Ticking)[] | null;
}

/** Per request: where the page it computes will be remembered, and the epoch it started in. */
const computing = new WeakMap<FastifyRequest, { key: string; epoch: number }>();

function viewerOf(request: FastifyRequest): string {
  const c = request.caller;
  return c ? `${c.credential.kind}:${c.credential.id}:${c.user.id}` : '-';
}

function written(pieces: (string | Ticking)[], tick: boolean): string {
  let out = '[';
  for (let i = 0; i < pieces.length; i += 1) {
    const p = pieces[i];
    if (i > 0) out += ',';
    if (typeof p === 'string') {
      out += p;
    } else {
      if (tick) p.tick(p.item);
      out += JSON.stringify(p.item);
    }
  }
  return out + ']';
}

export class RememberedPages {
  private readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  /** The remembered answer's text, its headers set on `reply`; undefined when it must be computed. */
  answer(request: FastifyRequest, reply: FastifyReply): string | undefined {
    const db = request.server.kiln.db;
    const epoch = answerEpoch(db);
    if (epoch === null) return undefined;
    const key = `${this.name}\u0000${request.url}\u0000${viewerOf(request)}`;
    const page = rememberedAnswer<Page>(db, key);
    if (!page) {
      computing.set(request, { key, epoch });
      return undefined;
    }
    for (const [name, value] of page.headers) reply.header(name, value);
    reply.type(JSON_TYPE);
    return page.body ?? written(page.pieces!, true);
  }

  /**
   * The answer's text for `items` (serialised by the route's `serialize`), remembered when no
   * write happened since `answer` was asked. `clock` names the items whose fields tick, with
   * what brings them up to date; it needs a serialiser that is JSON.stringify (an exactJson
   * schema's), so that an item can be written alone.
   */
  send<T extends object>(
    request: FastifyRequest, reply: FastifyReply, items: T[], serialize: (doc: unknown) => string,
    clock?: (index: number) => ((item: T) => void) | null,
  ): string {
    reply.type(JSON_TYPE);
    const ticks = clock ? items.map((_, i) => clock(i)) : null;
    let body: string;
    let pieces: (string | Ticking)[] | null = null;
    if (ticks?.some((t) => t !== null)) {
      pieces = items.map((item, i) => (ticks[i] ? { item, tick: ticks[i] as (item: object) => void } : JSON.stringify(item)));
      body = written(pieces, false);
      // The pieces are written as the schema's serialiser would write the whole (npm test checks it).
      if (checkingSerializers && serialize(items) !== body) throw new Error(`${this.name}: a page written piecewise differs from its serialiser's`);
    } else {
      body = serialize(items);
    }
    const pending = computing.get(request);
    if (pending) {
      const headers: [string, string][] = [];
      for (const name of PAGE_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers.push([name, String(value)]);
      }
      const page: Page = { headers, body: pieces ? null : body, pieces };
      rememberAnswer(request.server.kiln.db, pending.key, page, pending.epoch, body.length + pending.key.length);
    }
    return body;
  }
}
