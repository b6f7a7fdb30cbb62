/**
 * For test/api/query-plans.test.ts: the requests that exercise every filter of every list route
 * in the OpenAPI document, and the rules that find a full read of a large table in a plan.
 */

export interface Statement {
  sql: string;
  parameters: unknown[];
  /** The request that first ran it. */
  route: string;
}

export type PgPlanNode = Record<string, unknown> & { 'Node Type': string; Plans?: PgPlanNode[] };

export type Plan = { dialect: 'sqlite'; details: string[] } | { dialect: 'postgres'; root: PgPlanNode };

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[] } | undefined>>;
}

/**
 * Tables that stay small whatever the instance's size (one row, or one per configured thing):
 * reading them in full costs nothing. Every other table, including those added later, is large.
 */
const SMALL_TABLES = new Set(['application_settings', 'app_secrets', 'kysely_migration', 'kysely_migration_lock']);

/** Query parameters that page rather than filter: page 2 and keyset paging are requested once each. */
const PAGING = new Set(['page', 'per_page', 'cursor', 'id_after', 'id_before', 'pagination']);

const SAMPLE_TIME = '2026-01-01T00:00:00Z';

function values(p: Parameter, ids: Record<string, number | string>): string[][] {
  const s = p.schema?.anyOf?.find((x) => x.type !== 'null') ?? p.schema ?? {};
  const name = p.name;
  if (s.enum) return s.enum.map((v) => [`${name}=${encodeURIComponent(String(v))}`]);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'boolean':
      return [[`${name}=true`], [`${name}=false`]];
    case 'integer':
    case 'number':
      return [[`${name}=${ids[name] ?? 1}`]];
    case 'array': {
      const items = s.items?.enum ?? ['a'];
      // Each value alone, and all of them at once (`scope[]=a&scope[]=b`).
      const one = items.map((v) => [`${name}[]=${encodeURIComponent(String(v))}`]);
      return items.length > 1 ? [...one, items.map((v) => `${name}[]=${encodeURIComponent(String(v))}`)] : one;
    }
    case 'object':
      return [[`${name}[a]=b`]];
    default:
      if (s.format === 'date-time' || /(_after|_before|^from|^to)$/.test(name)) return [[`${name}=${SAMPLE_TIME}`]];
      if (name === 'sha') return [[`${name}=${'a'.repeat(40)}`]];
      return [[`${name}=a`]];
  }
}

/**
 * One request per list route without filters, then one per value of each filter (each order with
 * each direction), page 2, and keyset paging where offered. Path parameters take the ids of
 * `ids`: by name (`pipeline_id`), or for `{id}` by the collection before it (`projects`);
 * anything else is 1, which at worst answers 404 after the lookup it costs.
 */
export function listRequests(doc: OpenApiDocument, ids: Record<string, number | string>): { route: string; url: string }[] {
  const out: { route: string; url: string }[] = [];
  for (const [route, ops] of Object.entries(doc.paths)) {
    const params = ops.get?.parameters ?? [];
    if (!params.some((p) => p.in === 'query' && p.name === 'per_page')) continue;
    const path = route.replace(/\/([^/]+)\/\{([^}]+)\}/g, (_m, collection: string, name: string) => {
      const id = name === 'id' ? ids[collection] : ids[name];
      return `/${collection}/${id ?? 1}`;
    });
    const query = params.filter((p) => p.in === 'query');
    const variants: string[][] = [[], ['page=2']];
    if (query.some((p) => p.name === 'pagination')) variants.push(['pagination=keyset']);
    const sort = query.find((p) => p.name === 'sort');
    for (const p of query) {
      if (PAGING.has(p.name) || p.name === 'sort') continue;
      for (const v of values(p, ids)) {
        if (p.name === 'order_by' && sort) variants.push([...v, 'sort=asc'], [...v, 'sort=desc']);
        else variants.push(v);
      }
    }
    // A required query parameter (the search API's `scope` and `search`) is in every variant, with
    // its first value unless the variant varies it: without it the list would answer 400 unread.
    const required = query.filter((p) => p.required && !PAGING.has(p.name));
    for (const v of variants) {
      const full = [...required.filter((p) => !v.some((x) => x.startsWith(`${p.name}=`))).map((p) => values(p, ids)[0][0]), ...v];
      out.push({ route, url: full.length > 0 ? `${path}?${full.join('&')}` : path });
    }
  }
  return out;
}

/**
 * Conditions that keep nearly every row, checked on rows an index walk reaches in the order asked
 * (the LIMIT stops the walk within a page or two): users who are not blocked or banned, who are
 * not bots; projects not pending deletion, and (for a regular user) not private. An index on them
 * would not shorten the walk. Any other filtered column must be served by an index.
 */
const WIDE_CONDITIONS: Record<string, string[]> = {
  users: ['state', 'user_type'],
  projects: ['pending_delete', 'visibility_level'],
};

/**
 * Substring search (`LIKE '%text%'`) cannot use a b-tree index on either engine; the Service
 * serves it with trigram indexes on PostgreSQL only. A search walks the list's order and stops at
 * the page's end, as the Service's does on small instances; its other conditions are still
 * checked by the PostgreSQL rule's index conditions.
 */
const isSearch = (text: string) => /\blike\b/i.test(text);

/** What the plan rules need of the schema: each table's columns, and the columns that lead an index. */
export interface Schema {
  columns: Map<string, string[]>;
  indexed: Map<string, Set<string>>;
}

/**
 * The columns of `table` that `text` (conditions) filters on and that no index leads: a filter on
 * an indexed column may still be checked during a walk in the order asked, the planner's choice
 * when it expects the walk to fill the page sooner than a seek and a sort (a range such as
 * `created_after` on a list ordered by id); a filter without an index has no other way to run.
 */
function unindexedFilters(table: string, text: string, schema: Schema): string[] {
  const wide = WIDE_CONDITIONS[table] ?? [];
  const indexed = schema.indexed.get(table) ?? new Set<string>();
  return namedColumns(table, text, schema).filter((c) => c !== 'id' && !wide.includes(c) && !indexed.has(c));
}

/** The columns of `table` that `text` names (as a word, quoted or not). */
function namedColumns(table: string, text: string, schema: Schema): string[] {
  return (schema.columns.get(table) ?? []).filter((c) => new RegExp(`(^|[^\\w])"?${c}"?([^\\w]|$)`).test(text));
}

/**
 * The full reads of large tables in a plan, described.
 *
 * PostgreSQL (with sequential scans priced out of reach): a `Seq Scan` of a large table means no
 * index could serve; an index walked whole (no `Index Cond`) while its `Filter` drops rows by a
 * column no index leads is as bad. An index walked in the order asked, without such a filter, is
 * fine: the LIMIT stops it.
 *
 * SQLite: `SCAN t` (the table, or a whole index) of a large table whose WHERE filters on a column
 * of t that no index leads, or that is sorted afterwards (`USE TEMP B-TREE FOR ORDER BY`: every
 * row read before the first is returned); `SEARCH` uses an index to find the rows.
 */
export function fullScans(statement: Statement, plan: Plan, schema: Schema): string[] {
  const found: string[] = [];
  const search = isSearch(statement.sql);
  // A substring search's capped count (no order, LIMIT 10001) reads as far as its LIMIT whichever
  // way it reads: no b-tree index serves `LIKE '%text%'`, so PostgreSQL scanning the table stops
  // at the same bound as a walk of an index would.
  const cappedCount = !/\border by\b/i.test(statement.sql) && /\blimit 10001\b/i.test(statement.sql);
  if (plan.dialect === 'postgres') {
    const walk = (node: PgPlanNode) => {
      const table = node['Relation Name'] as string | undefined;
      if (table && !SMALL_TABLES.has(table)) {
        const type = node['Node Type'];
        const filter = node.Filter === undefined ? '' : String(node.Filter);
        // A capped count under only wide conditions reads as far as its LIMIT: no index would help.
        const onlyWide = filter !== '' && namedColumns(table, filter, schema).every((c) => (WIDE_CONDITIONS[table] ?? []).includes(c));
        if (type === 'Seq Scan' && !onlyWide && !(search && cappedCount)) found.push(`Seq Scan on ${table}${filter ? ` (Filter: ${filter})` : ''}`);
        else if (/Index/.test(type) && filter && !node['Index Cond'] && !search && unindexedFilters(table, filter, schema).length > 0) {
          found.push(`${type} on ${table} using ${String(node['Index Name'])} with Filter: ${filter}`);
        }
      }
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.root);
    return found;
  }
  const sorted = plan.details.some((d) => /USE TEMP B-TREE FOR (ORDER BY|RIGHT PART OF ORDER BY)/.test(d));
  // The conditions: everything after a WHERE, less the ORDER BY lists (a walk in order is fine).
  const where = statement.sql.split(/\bwhere\b/i).slice(1).join(' where ').replace(/\border by\b.*?(?=\blimit\b|\)|$)/gis, '');
  for (const detail of plan.details) {
    const m = /^SCAN (\w+)(?: AS \w+)?(?: USING (?:COVERING )?INDEX \w+)?/.exec(detail);
    if (!m || SMALL_TABLES.has(m[1]) || !schema.columns.has(m[1])) continue;
    const unindexed = search ? [] : unindexedFilters(m[1], where, schema);
    if (unindexed.length > 0 || sorted) found.push(`${detail}${unindexed.length > 0 ? ` (filtered by ${unindexed.join(', ')}, which no index leads)` : ''}${sorted ? ' (then sorted)' : ''}`);
  }
  return found;
}
