/**
 * Whole answers of the hottest lists (users, a project's jobs and pipelines), remembered as
 * they were sent, by the rule remembered rows follow (db/read-cache.ts): until the next
 * write through the app's database handle, and for at most its TTL, which bounds how long a write
 * by another server process can go unseen. Clients poll these lists (dashboards, CI monitors,
 * bots); computing a page costs 160–400 µs of CPU and answering a remembered one 30–100 µs
 * (issue 17, item 1). Only a page asked for twice within the TTL is kept (`asked`).
 *
 * A handler asks `answer` once its own refusals are decided (access, rate limits), so a
 * remembered page never skips a check; it is keyed by the route, the request's path and query,
 * and who asks (credential and effective user, so sudo and scopes are part of it). Values that
 * depend on the clock (a running job's duration, a waiting job's queued_duration) are not frozen:
 * such items are kept as objects and their ticking fields are recomputed for every answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerEpoch, rememberAnswer, rememberedAnswer, TTL_MS } from '../../db/read-cache.ts';
import { checkingSerializers, serializeWith } from '../entities/serializers.ts';

/** What pagination.ts sets on a page; the rest of an answer's headers belong to its request. */
const PAGE_HEADERS = ['link', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages'] as const;
// request-defaults.ts writes it without a charset, as the Service does.
const JSON_TYPE = 'application/json';

/** An item whose fields move with the clock: `tick` brings them up to date before it is written. */
interface Ticking { item: object; tick: (item: object) => void }

/**
 * A remembered answer. One that nothing in ticks is kept as bytes, encoded once rather than for
 * every request (UTF-8 encoding a 33 KB page costs ~20 µs). One with ticking items is kept as
 * text runs and, between them, those items, and is written as a string for every answer: a fresh
 * Buffer for each (a page of jobs, 33 KB, thousands a second) is memory outside V8's heap, freed
 * only when a collection finds it, and the bench's resident memory grew by 100 MB that way.
 */
interface Page {
  headers: [string, string][];
  body: Buffer | null;
  parts: (string | Ticking)[] | null;
}

/** Per request: where the page it computes will be remembered, and the epoch it started in. */
const computing = new WeakMap<FastifyRequest, { key: string; epoch: number }>();

/**
 * When each page was last asked for without being remembered. A page is remembered only when it
 * is asked for again within the TTL: keeping every page computed cost a page asked for once (a
 * client walking all pages, a URL that differs each time) a third more CPU, and 130 MB of
 * resident memory after the bench's runs, for answers nobody asked for again.
 */
const asked = new Map<string, number>();
const MAX_ASKED = 10_000;
/** Longer paths and queries are not remembered: the keys of `asked` stay small (10,000 × 2 KB at most). */
const MAX_URL = 2_048;

function viewerOf(request: FastifyRequest): string {
  const c = request.caller;
  return c ? `${c.credential.kind}:${c.credential.id}:${c.user.id}` : '-';
}

/** A ticking page's text, its ticking items brought up to date first when `tick`. */
function written(parts: (string | Ticking)[], tick: boolean): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      out += p;
    } else {
      if (tick) p.tick(p.item);
      out += JSON.stringify(p.item);
    }
  }
  return out;
}

export class RememberedPages {
  private readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  /** The remembered answer, its headers set on `reply`; undefined when it must be computed. */
  answer(request: FastifyRequest, reply: FastifyReply): Buffer | string | undefined {
    const db = request.server.kiln.db;
    const epoch = answerEpoch(db);
    if (epoch === null || request.url.length > MAX_URL) return undefined;
    const key = `${this.name}\u0000${request.url}\u0000${viewerOf(request)}`;
    const now = Date.now();
    const page = rememberedAnswer<Page>(db, key, now);
    if (!page) {
      const before = asked.get(key);
      if (before !== undefined && now - before < TTL_MS) {
        computing.set(request, { key, epoch });
      } else {
        if (asked.size >= MAX_ASKED) asked.clear();
        asked.set(key, now);
      }
      return undefined;
    }
    for (const [name, value] of page.headers) reply.header(name, value);
    reply.type(JSON_TYPE);
    return page.body ?? written(page.parts!, true);
  }

  /**
   * The answer for `items` (serialised by the route's `serialize`): a page asked for again
   * within the TTL is remembered, when no write happened since `answer` was asked. `clock` names
   * the items whose fields tick, with what brings them up to date; it needs a serialiser that is
   * JSON.stringify (an exactJson schema's), so that an item can be written alone.
   */
  send<T extends object>(
    request: FastifyRequest, reply: FastifyReply, items: T[], serialize: (doc: unknown) => string,
    clock?: (index: number) => ((item: T) => void) | null,
  ): Buffer | string | T[] {
    const pending = computing.get(request);
    // Asked for once: answered as any list is, nothing kept.
    if (!pending) {
      serializeWith(reply, serialize);
      return items;
    }
    reply.type(JSON_TYPE);
    const ticks = clock ? items.map((_, i) => clock(i)) : null;
    let page: Page;
    let answer: Buffer | string;
    if (ticks?.some((t) => t !== null)) {
      // Text runs up to each ticking item, which is kept as an object.
      const parts: (string | Ticking)[] = [];
      let run = '[';
      items.forEach((item, i) => {
        if (i > 0) run += ',';
        const tick = ticks[i] as ((item: object) => void) | null;
        if (tick) {
          parts.push(run, { item, tick });
          run = '';
        } else {
          run += JSON.stringify(item);
        }
      });
      parts.push(`${run}]`);
      answer = written(parts, false);
      // The parts are written as the schema's serialiser writes the whole (npm test checks it).
      if (checkingSerializers && serialize(items) !== answer) {
        throw new Error(`${this.name}: a page written in parts differs from its serialiser's`);
      }
      page = { headers: [], body: null, parts };
    } else {
      answer = Buffer.from(serialize(items));
      page = { headers: [], body: answer, parts: null };
    }
    for (const name of PAGE_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) page.headers.push([name, String(value)]);
    }
    const bytes = page.body ? page.body.length : page.parts!.reduce((n, p) => n + (typeof p === 'string' ? p.length : 2048), 0);
    rememberAnswer(request.server.kiln.db, pending.key, page, pending.epoch, bytes + pending.key.length);
    return answer;
  }
}
