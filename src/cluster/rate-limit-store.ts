/**
 * Rate-limit counters of the KILN_WORKERS processes without Redis, kept by their primary: a user's
 * budget (README, KILN_RATE_LIMIT_PER_USER) is one budget whichever process answers, as it is
 * across machines with Redis. Each count is one IPC round trip to the primary.
 *
 * The worker side is a @fastify/rate-limit store (its `store` option: `incr`, `read`, `child`);
 * the primary side counts in fixed windows as the library's own local store does.
 */
import crypto from 'node:crypto';

interface RateRequest {
  kiln: 'rate';
  id: number;
  op: 'incr' | 'read';
  key: string;
  timeWindow: number;
}

interface RateReply {
  kiln: 'rate-reply';
  id: number;
  current: number;
  ttl: number;
}

type Callback = (err: Error | null, res?: { current: number; ttl: number }) => void;

export function isRateRequest(message: unknown): message is RateRequest {
  const m = message as RateRequest | null;
  return typeof m === 'object' && m !== null && m.kiln === 'rate' && Number.isSafeInteger(m.id) && (m.op === 'incr' || m.op === 'read')
    && typeof m.key === 'string' && typeof m.timeWindow === 'number';
}

function isRateReply(message: unknown): message is RateReply {
  const m = message as RateReply | null;
  return typeof m === 'object' && m !== null && m.kiln === 'rate-reply' && Number.isSafeInteger(m.id);
}

/** How long the primary may take to answer before the request fails (as a lost Redis would fail it). */
const REPLY_TIMEOUT_MS = 5_000;

const pending = new Map<number, { cb: Callback; timer: NodeJS.Timeout }>();
let nextId = 0;
let listening = false;

function ask(op: RateRequest['op'], key: string, timeWindow: number, cb: Callback): void {
  if (!process.send || !process.connected) {
    cb(new Error('the primary process is gone'));
    return;
  }
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      if (!isRateReply(message)) return;
      const entry = pending.get(message.id);
      if (!entry) return;
      pending.delete(message.id);
      clearTimeout(entry.timer);
      entry.cb(null, { current: message.current, ttl: message.ttl });
    });
  }
  nextId += 1;
  const id = nextId;
  const timer = setTimeout(() => {
    pending.delete(id);
    cb(new Error('the primary process did not answer a rate-limit count'));
  }, REPLY_TIMEOUT_MS);
  pending.set(id, { cb, timer });
  const request: RateRequest = { kiln: 'rate', id, op, key, timeWindow };
  process.send(request, undefined, {}, (err: Error | null) => {
    if (!err || !pending.delete(id)) return;
    clearTimeout(timer);
    cb(err);
  });
}

/** The worker side: constructed by @fastify/rate-limit, one per route configuration (`child`). */
export class PrimaryRateLimitStore {
  private readonly prefix: string;

  constructor(_globalParams?: unknown, prefix = '') {
    this.prefix = prefix;
  }

  incr(key: string, cb: Callback, timeWindow: number): void {
    ask('incr', this.prefix + key, timeWindow, cb);
  }

  read(key: string, cb: Callback, timeWindow: number): void {
    ask('read', this.prefix + key, timeWindow, cb);
  }

  /** A route with a configuration of its own counts apart (as the library's Redis store names it). */
  child(routeOptions: unknown): PrimaryRateLimitStore {
    const route = (routeOptions as { routeInfo?: { method?: string; url?: string } }).routeInfo;
    return new PrimaryRateLimitStore(undefined, `${this.prefix}${route?.method ?? ''}${route?.url ?? ''}-`);
  }
}

const MAX_KEYS = 100_000;

/** The primary side: fixed windows per key, answered to the worker that asked. */
export class RateCounters {
  private readonly windows = new Map<string, { current: number; start: number }>();
  /** Keys are digests: a key carries a user id or an IP, and nothing needs them in the clear. */
  private readonly salt = crypto.randomBytes(16);

  answer(request: RateRequest, now = Date.now()): RateReply {
    const key = crypto.createHmac('sha256', this.salt).update(request.key).digest('base64');
    let w = this.windows.get(key);
    if (w && w.start + request.timeWindow <= now) w = undefined;
    if (request.op === 'read') {
      return {
        kiln: 'rate-reply', id: request.id, current: w?.current ?? 0,
        ttl: w ? w.start + request.timeWindow - now : request.timeWindow,
      };
    }
    if (!w) {
      if (this.windows.size >= MAX_KEYS) this.sweep(now, request.timeWindow);
      w = { current: 0, start: now };
      this.windows.set(key, w);
    }
    w.current += 1;
    return { kiln: 'rate-reply', id: request.id, current: w.current, ttl: w.start + request.timeWindow - now };
  }

  /** Drops the windows that ended; if none had, all of them (a budget restarts, none is lost for good). */
  private sweep(now: number, timeWindow: number): void {
    for (const [k, w] of this.windows) if (w.start + timeWindow <= now) this.windows.delete(k);
    if (this.windows.size >= MAX_KEYS) this.windows.clear();
  }
}
