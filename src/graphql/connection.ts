/**
 * Relay connections as the Service serves them (graphql-ruby keyset connections): `first`,
 * `after`, `last`, `before`, `pageInfo`, `nodes`, `edges { cursor node }` and `count` where the
 * Service has it; at most 100 nodes a page (GitlabSchema `default_max_page_size 100`). Cursors are
 * base64 of `{"id":"<id>"}`, the shape of the Service's own keyset cursors.
 */
import { GraphQLError } from 'graphql';
import type { SelectQueryBuilder } from 'kysely';
import { MAX_COUNT } from '../http/lists/pagination.ts';

export const MAX_PAGE_SIZE = 100;

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface Connection<T> {
  nodes: T[];
  edges: { cursor: string; node: T }[];
  pageInfo: PageInfo;
  /** Resolved only when the query asks for it (a capped count query, or the list's length). */
  count: () => Promise<number> | number;
}

export function encodeCursor(id: number): string {
  return Buffer.from(JSON.stringify({ id: String(id) })).toString('base64');
}

function decodeCursor(cursor: string | null | undefined, name: string): number | null {
  if (cursor === null || cursor === undefined) return null;
  let id: unknown;
  try {
    id = cursor.length <= 200 ? JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'))?.id : undefined;
  } catch {
    id = undefined;
  }
  const n = typeof id === 'string' && /^[0-9]{1,10}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(n) || n > 2 ** 31 - 1) throw new GraphQLError(`Please provide a valid cursor for \`${name}\``);
  return n;
}

function pageSize(args: ConnectionArgs): { size: number; fromEnd: boolean } {
  for (const k of ['first', 'last'] as const) {
    const v = args[k];
    if (typeof v === 'number' && v < 0) throw new GraphQLError(`Argument '${k}' must be greater than or equal to 0`);
  }
  const fromEnd = typeof args.last === 'number' && typeof args.first !== 'number';
  const asked = fromEnd ? args.last! : args.first ?? MAX_PAGE_SIZE;
  return { size: Math.min(asked, MAX_PAGE_SIZE), fromEnd };
}

function build<T extends { id: number }>(nodes: T[], hasNext: boolean, hasPrevious: boolean, count: Connection<T>['count']): Connection<T> {
  const edges = nodes.map((node) => ({ cursor: encodeCursor(node.id), node }));
  return {
    nodes,
    edges,
    pageInfo: {
      hasNextPage: hasNext,
      hasPreviousPage: hasPrevious,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    count,
  };
}

/**
 * A page of rows ordered by `id` in `order` (the list's natural order), keyset on id. `last`
 * without `first` reads the other way and turns the page round. `countQuery` is the unpaged
 * query; its count is capped as REST's (10,000, reference §7).
 */
export async function connectionFromQuery<DB, TB extends keyof DB, T extends { id: number }>(
  query: SelectQueryBuilder<DB, TB, T>, args: ConnectionArgs, order: 'asc' | 'desc', idColumn = 'id',
): Promise<Connection<T>> {
  const after = decodeCursor(args.after, 'after');
  const before = decodeCursor(args.before, 'before');
  const { size, fromEnd } = pageSize(args);
  // Kysely cannot type a column name given at run time; the column is one of the builder's.
  let q = query as SelectQueryBuilder<any, any, T>;
  const unpaged = q;
  const beyond = (dir: 'asc' | 'desc') => (dir === 'desc' ? '<' : '>');
  const back = order === 'desc' ? 'asc' : 'desc';
  if (after !== null) q = q.where(idColumn, beyond(order), after);
  if (before !== null) q = q.where(idColumn, beyond(back), before);
  // Capped as REST counts (reference §7): at most 10,001 ids are read, never a full count(*).
  const count = async () => (await unpaged.clearSelect().clearOrderBy().select(idColumn).limit(MAX_COUNT + 1).execute()).length;
  if (size === 0) return build<T>([], false, false, count);
  const rows = await q.clearOrderBy().orderBy(idColumn, fromEnd ? back : order).limit(size + 1).execute();
  const more = rows.length > size;
  const page = rows.slice(0, size);
  if (fromEnd) page.reverse();
  return fromEnd
    ? build(page, before !== null, more, count)
    : build(page, more, after !== null, count);
}

/** The same paging over a list already in memory (a parent's children loaded in one batch). */
export function connectionFromArray<T extends { id: number }>(
  items: readonly T[], args: ConnectionArgs, order: 'asc' | 'desc',
): Connection<T> {
  const after = decodeCursor(args.after, 'after');
  const before = decodeCursor(args.before, 'before');
  const { size, fromEnd } = pageSize(args);
  const ahead = (a: number, b: number) => (order === 'asc' ? a > b : a < b);
  const window = items.filter((n) => (after === null || ahead(n.id, after)) && (before === null || ahead(before, n.id)));
  const count = () => items.length;
  if (fromEnd) {
    const page = window.slice(Math.max(0, window.length - size));
    return build(page, before !== null, window.length > page.length, count);
  }
  const page = window.slice(0, size);
  return build(page, window.length > page.length, after !== null, count);
}
