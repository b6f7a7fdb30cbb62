/**
 * The one pagination helper every list uses (reference §7; spec, Pagination details).
 *
 * Offset: page/per_page clamped as Kaminari does, X-* headers, a Link header of prev/next/first/
 * last URLs built from KILN_EXTERNAL_URL and every declared parameter; totals come from a count
 * capped at 10,001 rows, and past 10,000 the totals and rel="last" are dropped.
 * Keyset: order by id, `id_after`/`id_before` cursors, a Link with rel="next" only, absent at the end.
 * Cursor keyset: any order ending in a unique column, an opaque `cursor` (base64url JSON of the
 * last row's order values), the same lone rel="next" Link.
 */
import { sql, type Expression, type Kysely, type QueryCreator, type SelectQueryBuilder } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DB } from '../../db/types.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { param } from '../../db/prepared.ts';
import { ShapedStatements, type QueryShape, type StepKind } from '../../db/query-shape.ts';
import { ApiError, invalidParams } from '../errors.ts';
import { P } from '../input/params.ts';

export const MAX_COUNT = 10_000;
export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;

/** Declared on every paginated route: `...paginationParams`. */
export const paginationParams = {
  page: P.optional(P.integer({ default: 1, description: 'page number (default 1)' })),
  // Any integer: more than 100 is 100, as the Service clamps it (it is never stored).
  per_page: P.optional(
    P.integer({
      default: DEFAULT_PER_PAGE, exceptValues: [0], minimum: Number.MIN_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER, description: 'items per page (default 20, max 100)',
    }),
  ),
};

/** Declared on routes that also offer keyset pagination (projects: order_by=id only). */
export const keysetParams = {
  pagination: P.optional(P.oneOf(['offset', 'keyset'] as const, { description: 'keyset selects keyset pagination' })),
  id_after: P.optional(P.integer({ description: 'keyset cursor: ids greater than this' })),
  id_before: P.optional(P.integer({ description: 'keyset cursor: ids less than this' })),
};

/** Declared on routes whose keyset pagination takes an opaque cursor (groups: name asc). */
export const cursorKeysetParams = {
  pagination: keysetParams.pagination,
  cursor: P.optional(P.string({ description: 'keyset cursor: the value of `cursor` in the previous page\'s Link' })),
};

/** Parameters never copied into Link URLs: credentials. */
const SECRET_PARAMS = new Set(['private_token', 'access_token', 'job_token', 'token', 'bearer_token']);

export function perPageOf(input: Record<string, unknown>): number {
  const raw = input.per_page;
  if (typeof raw !== 'number' || raw < 0) return DEFAULT_PER_PAGE;
  return Math.min(raw, MAX_PER_PAGE);
}

function pageOf(input: Record<string, unknown>): number {
  const raw = input.page;
  return typeof raw === 'number' && raw >= 1 ? raw : 1;
}

/**
 * Rails `to_query`: keys sorted, arrays as `k[]=v`, hashes as `k[sub]=v`; arrays of hashes as
 * `k[0][sub]=v`, the spec's spelling, which qs reads back as the same array (`k[][sub]` it does not).
 */
export function toQuery(params: Record<string, unknown>, prefix?: string): string {
  const parts: string[] = [];
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    const name = prefix ? `${prefix}[${key}]` : key;
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        if (item !== null && typeof item === 'object') {
          const nested = toQuery(item as Record<string, unknown>, `${name}[${i}]`);
          if (nested) parts.push(nested);
        } else {
          parts.push(`${encodeURIComponent(`${name}[]`)}=${encodeURIComponent(String(item ?? ''))}`);
        }
      });
    } else if (value !== null && typeof value === 'object') {
      const nested = toQuery(value as Record<string, unknown>, name);
      if (nested) parts.push(nested);
    } else {
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(value === null ? '' : String(value))}`);
    }
  }
  return parts.join('&');
}

function linkBase(request: FastifyRequest): string {
  const pathname = request.url.split('?', 1)[0];
  return `${request.server.kiln.config.externalUrl}${pathname}`;
}

/** Declared params of the request (defaults included) plus `sudo`, minus credentials. */
function linkParams(request: FastifyRequest): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const routeParams = request.params as Record<string, unknown>;
  for (const [k, v] of Object.entries(request.input)) {
    if (SECRET_PARAMS.has(k) || Object.hasOwn(routeParams ?? {}, k)) continue;
    params[k] = v;
  }
  const sudo = (request.query as Record<string, unknown>)?.sudo;
  if (typeof sudo === 'string') params.sudo = sudo;
  return params;
}

/**
 * The offset links of one page, `[rel, page]` each: the request's parameters are written once,
 * split where `page` sorts among them (toQuery's order), and each link puts its page between the
 * two halves instead of writing every parameter again (2–4 links a list answer).
 */
function offsetLinks(request: FastifyRequest, perPage: number, pages: [rel: string, page: number][]): string {
  const params: Record<string, unknown> = { ...linkParams(request), per_page: perPage };
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const key of Object.keys(params)) {
    if (key !== 'page') (key < 'page' ? before : after)[key] = params[key];
  }
  const base = linkBase(request);
  const head = toQuery(before);
  const tail = toQuery(after);
  return pages.map(([rel, page]) => `<${base}?${head ? `${head}&` : ''}page=${page}${tail ? `&${tail}` : ''}>; rel="${rel}"`).join(', ');
}

export interface OffsetOptions {
  /** Keyset-capable types refuse offsets past this (reference §7.4); the type names the message. */
  maxOffset?: { limit: number; typeName: string };
}

/**
 * Runs one page of `qb` (already filtered and ordered) and sets the offset headers. The count
 * reads at most 10,001 rows of the same filtered query, so its cost is bounded.
 */
export async function paginate<O>(
  db: Kysely<DB>,
  request: FastifyRequest,
  reply: FastifyReply,
  qb: SelectQueryBuilder<DB, any, O>,
  opts: OffsetOptions = {},
): Promise<O[]> {
  const { page, perPage, offset } = offsetWindow(request, opts);
  // A literal LIMIT (a validated 1…101), as ShapedList writes it.
  const rows = await qb.limit(sql.lit(perPage + 1)).offset(offset).execute();
  return finishPage(request, reply, { page, perPage }, rows, () => {
    const capped = qb.clearSelect().clearOrderBy().select(sql<number>`1`.as('one')).limit(sql.lit(MAX_COUNT + 1)).as('capped');
    const compiled = db.selectFrom(capped).select((eb) => eb.fn.countAll<number>().as('n')).compile();
    return cachedRead(db, `count:${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`, async () => {
      const result = await db.executeQuery(compiled);
      return Number(result.rows[0]?.n ?? 0);
    });
  });
}

/**
 * Drops the look-ahead row, counts (`count`, capped) when the page cannot tell the total, sets
 * the offset headers. The capped count is the costliest part of a page (~260 µs of SQLite time
 * for 10,001 index entries on a 100k-row table): callers remember it until the next write
 * (db/read-cache.ts).
 */
async function finishPage<O>(
  request: FastifyRequest, reply: FastifyReply, w: { page: number; perPage: number }, rows: O[], count: () => Promise<number>,
): Promise<O[]> {
  const hasNext = rows.length > w.perPage;
  if (hasNext) rows.pop();
  let total: number | null;
  if (w.page === 1 && !hasNext) {
    total = rows.length;
  } else {
    const n = await count();
    total = n > MAX_COUNT ? null : n;
  }
  setOffsetHeaders(request, reply, { page: w.page, perPage: w.perPage, hasNext, total });
  return rows;
}

function offsetWindow(request: FastifyRequest, opts: OffsetOptions): { page: number; perPage: number; offset: number } {
  const page = pageOf(request.input);
  const perPage = perPageOf(request.input);
  const offset = (page - 1) * perPage;
  if (opts.maxOffset && offset > opts.maxOffset.limit) {
    throw new ApiError(405, {
      error: `Offset pagination has a maximum allowed offset of ${opts.maxOffset.limit} for requests that return objects of `
        + `type ${opts.maxOffset.typeName}. Remaining records can be retrieved using keyset pagination.`,
    });
  }
  return { page, perPage, offset };
}

/**
 * Past this offset a page reads its rows by id (a deferred join): the offset walk reads only the
 * ids, through an index that holds them, instead of whole rows (and, on PostgreSQL, whatever the
 * page selects besides, which it computes for skipped rows too). Page 5,000 of 100,000 users:
 * 8.5 ms whole rows, 0.6 ms ids through users_id on SQLite (issue 17, item 2).
 */
const DEFERRED_JOIN_OFFSET = 1_000;

/** A list whose queries are compiled once per filter shape (db/query-shape.ts). */
export class ShapedList<QB extends SelectQueryBuilder<DB, any, any>, O> {
  private readonly page: ShapedStatements<QB, O>;
  private readonly deepPage: ShapedStatements<QB, O>;
  private readonly count: ShapedStatements<QB, { n: number | string }>;
  private readonly name: string;

  constructor(name: string, opts: {
    /** Where the filters start: the table (and its joins), selecting nothing. */
    from: (db: QueryCreator<DB>) => QB;
    /** What a page selects, added to the filtered and ordered query. */
    select: (qb: QB) => SelectQueryBuilder<DB, any, O>;
    /** The unique column a deep page looks its rows up by. */
    id: string;
  }) {
    this.name = name;
    // The page size (plus one, to see a next page) is written into the SQL, part of the
    // statement's key: a bare bound LIMIT once had SQLite 3.54 prepare the statement again on
    // every run (a page of 21 users: 76 µs against 38 µs; every parameter is now written `+?`,
    // db/database.ts, which that measure predates). The offset is bound, at the position after
    // the shape's own values.
    // The page's own columns come first in the select list, then what the shape's select steps
    // add (correlated subqueries): the query-plan test reads a statement's conditions as the text
    // after its first WHERE, which would otherwise take the columns for conditions.
    const selected = (
      from: QB, shape: QueryShape<QB>, kinds?: readonly StepKind[],
    ) => shape.apply(opts.select(from) as unknown as QB, kinds) as unknown as SelectQueryBuilder<DB, any, O>;
    this.page = new ShapedStatements((db, shape, size) => selected(opts.from(db), shape)
      .limit(sql.lit(size)).offset(param<number>(shape.args.length)));
    // The page's ids first, in a materialised CTE so that it runs once: as `IN (subquery)`,
    // PostgreSQL without statistics (a fresh bulk load) made it the inner side of a semi-join and
    // walked the offset again for every row (page 5,000 of 100,000 jobs never finished). Then
    // the rows of those ids, in the list's order, without its filters (the ids satisfy them).
    this.deepPage = new ShapedStatements((db, shape, size) => {
      const withPage = db.with((cte) => cte('page').materialized(), (d) => shape.apply(opts.from(d), ['filter', 'order']).clearSelect()
        .select(sql.ref(opts.id).as('page_id')).limit(sql.lit(size)).offset(param<number>(shape.args.length)));
      return selected(opts.from(withPage as unknown as QueryCreator<DB>), shape, ['order', 'select'])
        .where(sql.ref(opts.id), 'in', sql`(select page_id from page)`).limit(sql.lit(size));
    });
    this.count = new ShapedStatements((db, shape) => {
      const capped = shape.apply(
        opts.from(db), ['filter'],
      ).clearSelect().clearOrderBy().select(sql<number>`1`.as('one')).limit(sql.lit(MAX_COUNT + 1)).as('capped');
      return db.selectFrom(capped).select((eb) => eb.fn.countAll<number>().as('n'));
    });
  }

  /** One page of the list `shape` describes, with the offset headers (as paginate). */
  async paginate(
    db: Kysely<DB>, request: FastifyRequest, reply: FastifyReply, shape: QueryShape<QB>,
    opts: OffsetOptions = {},
  ): Promise<O[]> {
    const { page, perPage, offset } = offsetWindow(request, opts);
    const statement = offset >= DEFERRED_JOIN_OFFSET ? this.deepPage : this.page;
    const rows = await statement.of(shape, perPage + 1).all(db, [...shape.args, offset]);
    return finishPage(request, reply, {
      page, perPage,
    }, rows, () => cachedRead(db, `count:${this.name}|${shape.key}\u0000${JSON.stringify(shape.args)}`, async () => {
      const [row] = await this.count.of(shape).all(db, shape.args);
      return Number(row?.n ?? 0);
    }));
  }
}

/** For lists already in memory (small, bounded collections). */
export function paginateArray<T>(request: FastifyRequest, reply: FastifyReply, items: T[]): T[] {
  const page = pageOf(request.input);
  const perPage = perPageOf(request.input);
  const start = (page - 1) * perPage;
  const slice = items.slice(start, start + perPage);
  const total = items.length > MAX_COUNT ? null : items.length;
  setOffsetHeaders(request, reply, { page, perPage, hasNext: items.length > start + perPage, total });
  return slice;
}

/** The page, its size and its offset that a request asks for (lists kiln pages outside SQL). */
export function pageWindow(request: FastifyRequest): { page: number; perPage: number; offset: number } {
  const page = pageOf(request.input);
  const perPage = perPageOf(request.input);
  return { page, perPage, offset: (page - 1) * perPage };
}

export function setOffsetHeaders(
  request: FastifyRequest, reply: FastifyReply,
  p: { page: number; perPage: number; hasNext: boolean; total: number | null },
): void {
  const totalPages = p.total === null ? null : Math.max(1, Math.ceil(p.total / p.perPage));
  const hasPrev = p.page > 1 && (totalPages === null || p.page <= totalPages);
  reply.header('x-page', String(p.page));
  reply.header('x-per-page', String(p.perPage));
  reply.header('x-next-page', p.hasNext ? String(p.page + 1) : '');
  reply.header('x-prev-page', hasPrev ? String(p.page - 1) : '');
  if (p.total !== null && totalPages !== null) {
    reply.header('x-total', String(p.total));
    reply.header('x-total-pages', String(totalPages));
  }
  const pages: [string, number][] = [];
  if (hasPrev) pages.push(['prev', p.page - 1]);
  if (p.hasNext) pages.push(['next', p.page + 1]);
  pages.push(['first', 1]);
  if (totalPages !== null) pages.push(['last', totalPages]);
  reply.header('link', offsetLinks(request, p.perPage, pages));
}

export interface KeysetOptions {
  /** The orders this type supports; anything else is 405 (reference §7.5). */
  orderBy: string;
  supported: string[];
  sort: 'asc' | 'desc';
}

export function keysetRequested(input: Record<string, unknown>): boolean {
  return input.pagination === 'keyset';
}

/**
 * Keyset pages on `id`: `qb` must be filtered but not yet ordered or cursor-limited. Sets only
 * `Link: <…id_after=N>; rel="next"` (asc) or `id_before=N` (desc), and none on the last page.
 */
export async function paginateKeyset<O extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  qb: SelectQueryBuilder<DB, any, O>,
  opts: KeysetOptions,
): Promise<O[]> {
  if (!opts.supported.includes(opts.orderBy)) throw keysetUnavailable();
  const perPage = perPageOf(request.input);
  const input = request.input;
  let q = qb as SelectQueryBuilder<any, any, O>;
  const idCol = 'id';
  // Cursors past what an integer column holds compare as its bounds (PostgreSQL refuses them).
  const bound = (n: number) => Math.max(-2_147_483_648, Math.min(2_147_483_647, n));
  if (typeof input.id_after === 'number') q = q.where(idCol, '>', bound(input.id_after));
  if (typeof input.id_before === 'number') q = q.where(idCol, '<', bound(input.id_before));
  // A full page links to the next one without looking ahead; the page after the last full one is
  // the empty array without a Link header (spec, Pagination details: "the header is absent and the
  // array empty when the end is reached"), as the Service's keyset pager does.
  const rows = await q.orderBy(idCol, opts.sort).limit(sql.lit(perPage)).execute();
  if (rows.length === perPage) {
    const last = rows[rows.length - 1].id;
    const cursor = opts.sort === 'asc' ? { id_after: last, id_before: undefined } : { id_before: last, id_after: undefined };
    const params = { ...linkParams(request), per_page: perPage, page: undefined, ...cursor };
    reply.header('link', `<${linkBase(request)}?${toQuery(params)}>; rel="next"`);
  }
  return rows;
}

/**
 * Sets `Link: <…>; rel="next"` from the request's parameters with `overrides`, for keyset pages
 * that are cut outside SQL (a repository tree's `page_token`).
 */
export function setNextLink(request: FastifyRequest, reply: FastifyReply, overrides: Record<string, unknown>): void {
  reply.header('link', `<${linkBase(request)}?${toQuery({ ...linkParams(request), page: undefined, ...overrides })}>; rel="next"`);
}

/** One column of a cursor-paginated order; the last key must be unique (the id). */
export interface CursorKey<O> {
  /** Its name in the cursor. */
  name: string;
  /** The column ordered by. */
  column: string;
  /** Order and compare by lower(column), on both sides, so engines agree whatever the characters. */
  lower?: boolean;
  /** Its value in a row of the page. */
  value: (row: O) => string | number;
  type: 'string' | 'number';
}

const KEYSET_UNAVAILABLE = 'Keyset pagination is not yet available for this type of request';

/** The 405 a keyset request gets when the type does not support its order (reference §7.5). */
export function keysetUnavailable(): ApiError {
  return new ApiError(405, { error: KEYSET_UNAVAILABLE });
}

export function encodeCursor(values: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** The cursor's values, or a 400 when it is not one this order could have written. */
function decodeCursor<O>(raw: string, keys: CursorKey<O>[]): Record<string, string | number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidParams(['cursor is invalid']);
  }
  const valid = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    && keys.every((k) => typeof (parsed as Record<string, unknown>)[k.name] === k.type
      && (k.type !== 'number' || Number.isSafeInteger((parsed as Record<string, unknown>)[k.name])));
  if (!valid) throw invalidParams(['cursor is invalid']);
  return parsed as Record<string, string | number>;
}

/**
 * Keyset pages in the order of `keys` (all `sort`), resuming after the row named by `cursor`:
 * `qb` must be filtered but not ordered. Sets only `Link: <…cursor=…>; rel="next"`, none on the
 * last page. The comparison is the row-value one written out, `(a > x) or (a = x and b > y)`,
 * so an index on the keys serves it on both engines.
 */
export async function paginateCursor<O>(
  request: FastifyRequest,
  reply: FastifyReply,
  qb: SelectQueryBuilder<DB, any, O>,
  opts: { keys: CursorKey<O>[]; sort: 'asc' | 'desc' },
): Promise<O[]> {
  const perPage = perPageOf(request.input);
  const expr = (k: CursorKey<O>): Expression<unknown> => (k.lower ? sql`lower(${sql.ref(k.column)})` : sql.ref(k.column));
  const operand = (k: CursorKey<O>, v: string | number): Expression<unknown> => (k.lower ? sql`lower(${v})` : sql`${v}`);
  let q = qb as SelectQueryBuilder<any, any, O>;
  const raw = request.input.cursor;
  if (typeof raw === 'string' && raw !== '') {
    const after = decodeCursor(raw, opts.keys);
    const op = opts.sort === 'asc' ? '>' : '<';
    q = q.where((eb) => eb.or(opts.keys.map((k, i) => eb.and([
      ...opts.keys.slice(0, i).map((prev) => eb(expr(prev), '=', operand(prev, after[prev.name]))),
      eb(expr(k), op, operand(k, after[k.name])),
    ]))));
  }
  for (const k of opts.keys) q = q.orderBy(expr(k), opts.sort);
  // A full page links on, as paginateKeyset does.
  const rows = await q.limit(sql.lit(perPage)).execute();
  if (rows.length === perPage) {
    const last = rows[rows.length - 1];
    const cursor = encodeCursor(Object.fromEntries(opts.keys.map((k) => [k.name, k.value(last)])));
    const params = { ...linkParams(request), per_page: perPage, page: undefined, cursor };
    reply.header('link', `<${linkBase(request)}?${toQuery(params)}>; rel="next"`);
  }
  return rows;
}
