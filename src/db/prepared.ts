/**
 * Queries compiled once. Building and compiling a Kysely query costs more than running a point
 * read on SQLite (measured on GET /users/:id: ~40 µs of builder work per request against ~20 µs
 * in SQLite). A hot query is written once with `param(i)` placeholders; it is compiled on first
 * use per engine and afterwards only its parameter list is rebuilt.
 *
 *   const byId = prepared((db) => db.selectFrom('users').selectAll().where('id', '=', param<number>(0)));
 *   const row = await byId.first(db, [42]);
 */
import { CompiledQuery, PostgresAdapter, type Compilable, type Kysely } from 'kysely';
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { DB } from './types.ts';
import { queryLogOf } from './query-log.ts';

/**
 * The embedded database's connection behind each Kysely handle (database.ts registers it).
 * better-sqlite3 answers synchronously, so a prepared read can run on it directly, without
 * Kysely's connection mutex and its promise hops, whenever no transaction is open on the
 * connection: outside a transaction every statement has run to completion, so a direct read
 * sees exactly the committed state. Inside one, the read takes Kysely's path and waits its turn.
 * Transaction handles are never registered, so reads inside a transaction stay in it.
 */
const sqliteConnections = new WeakMap<Kysely<DB>, SQLite.Database>();

export function registerSqliteConnection(db: Kysely<DB>, connection: SQLite.Database): void {
  sqliteConnections.set(db, connection);
}

/**
 * The PostgreSQL pool behind each Kysely handle (database.ts registers it). Outside a transaction
 * a prepared read runs on it as a named statement: PostgreSQL parses and plans it once per
 * connection, and the driver skips describing its columns again (measured on the users row:
 * ~190 µs of client CPU unnamed, ~155 µs named). Kysely sends every query unnamed.
 *
 * Its rows then come back as one JSON text (jsonReading below): pg reads each field of each row in
 * JavaScript, while JSON.parse reads the whole answer natively. Measured on the bench database
 * (client CPU per query, median of 7 × 500): a user's row 163 → 123 µs, 21 users 278 → 205 µs,
 * 21 jobs 198 → 159 µs.
 */
const postgresPools = new WeakMap<Kysely<DB>, pg.Pool>();

export function registerPostgresPool(db: Kysely<DB>, pool: pg.Pool): void {
  postgresPools.set(db, pool);
}

// Statement names are per connection; one process's prepared queries are numbered in order.
let statements = 0;

const PREFIX = '\u0000kiln-param:';

/** A placeholder for the i-th argument; typed as the value it stands for. */
export function param<T>(index: number): T {
  return `${PREFIX}${index}` as unknown as T;
}

interface Compiled {
  query: CompiledQuery;
  /** The PostgreSQL statement name. */
  name: string;
  /** PostgreSQL: whether its rows are read as JSON (null until its first run shows its column types). */
  json: JsonReading | false | null;
  /** For each compiled parameter: the argument index it takes, or -1 for a literal. */
  slots: number[];
  /** The statement on each embedded connection, prepared on first direct use there. */
  statements: WeakMap<SQLite.Database, SQLite.Statement>;
}

export interface Prepared<O> {
  all(db: Kysely<DB>, args: readonly unknown[]): Promise<O[]>;
  first(db: Kysely<DB>, args: readonly unknown[]): Promise<O | undefined>;
}

export function prepared<O>(build: (db: Kysely<DB>) => Compilable<O>): Prepared<O> {
  let sqlite: Compiled | null = null;
  let postgres: Compiled | null = null;

  function compiled(db: Kysely<DB>): Compiled {
    const isPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
    const cached = isPostgres ? postgres : sqlite;
    if (cached) return cached;
    const query = build(db).compile();
    // Prepared queries bypass Kysely's plugins, the write epoch among them: reads only.
    if (query.query.kind !== 'SelectQueryNode') throw new Error(`prepared() takes reads only: ${query.sql}`);
    const slots = query.parameters.map((p) => (typeof p === 'string' && p.startsWith(PREFIX) ? Number(p.slice(PREFIX.length)) : -1));
    statements += 1;
    const fresh: Compiled = {
      query, name: `kiln_prepared_${statements}`, json: null, slots,
      statements: new WeakMap<SQLite.Database, SQLite.Statement>(),
    };
    if (isPostgres) postgres = fresh;
    else sqlite = fresh;
    return fresh;
  }

  async function all(db: Kysely<DB>, args: readonly unknown[]): Promise<O[]> {
    const c = compiled(db);
    const parameters = bind(c, args);
    const connection = sqliteConnections.get(db);
    const pool = postgresPools.get(db);
    // Kysely's log sees the last path below; the direct ones are told to the query log here.
    if (connection || pool) queryLogOf(db)?.(c.query.sql, parameters);
    if (connection && !connection.inTransaction) {
      let statement = c.statements.get(connection);
      if (!statement) {
        statement = connection.prepare(c.query.sql);
        c.statements.set(connection, statement);
      }
      return statement.all(parameters) as O[];
    }
    if (pool) {
      if (c.json) return readAsJson<O>(pool, c.json, parameters);
      const result = await pool.query({ name: c.name, text: c.query.sql, values: parameters });
      if (c.json === null) c.json = jsonReading(c, result.fields);
      return result.rows as O[];
    }
    const result = await db.executeQuery<O>(CompiledQuery.raw(c.query.sql, parameters));
    return result.rows;
  }

  const statement: Prepared<O> = {
    all,
    first: async (db, args) => (await all(db, args))[0],
  };
  compilers.set(statement, compiled);
  return statement;
}

/** Each prepared statement's compiled form on a handle (for readTogether). */
const compilers = new WeakMap<Prepared<unknown>, (db: Kysely<DB>) => Compiled>();

/** The statement's parameters for this call's arguments. */
function bind(c: Compiled, args: readonly unknown[]): unknown[] {
  return c.slots.map((slot, i) => (slot >= 0 ? args[slot] : c.query.parameters[i]));
}

/** One prepared read and its arguments. */
export interface Read<O> {
  statement: Prepared<O>;
  args: readonly unknown[];
}

/** Combined statements named so far (each is prepared on every connection that runs it). */
const together = new Map<string, { name: string | undefined; text: string; readings: JsonReading[] } | null>();
const MAX_NAMED_TOGETHER = 100;

/**
 * Several prepared reads that do not depend on each other (the lookups behind a page: its
 * pipelines, users, artifacts, runners), each one's rows in order. On PostgreSQL, once each has
 * shown its JSON reading, they run as one statement, one round trip instead of one each:
 * `select json_build_array((select coalesce(<its aggregate>, '[]') from (<first>) q), …)`, the
 * parameters of each renumbered after the previous ones'. Elsewhere (SQLite, a transaction, a
 * statement not yet read once) they run one after another.
 */
export async function readTogether(db: Kysely<DB>, reads: readonly Read<unknown>[]): Promise<unknown[][]> {
  const pool = postgresPools.get(db);
  const compiled = pool && reads.length > 1 ? reads.map((r) => compilers.get(r.statement)!(db)) : null;
  const combined = compiled && compiled.every((c) => c.json) ? combine(compiled) : null;
  if (!pool || !compiled || !combined) {
    const out: unknown[][] = [];
    for (const r of reads) out.push(await r.statement.all(db, r.args));
    return out;
  }
  const parameters = compiled.flatMap((c, i) => bind(c, reads[i].args));
  queryLogOf(db)?.(combined.text, parameters);
  const result = await pool.query<{ rows: string }>({ name: combined.name, text: combined.text, values: parameters });
  const parts = JSON.parse(result.rows[0].rows) as unknown[][];
  return parts.map((rows, i) => readRows(combined.readings[i], rows));
}

function combine(compiled: Compiled[]): { name: string | undefined; text: string; readings: JsonReading[] } | null {
  const key = compiled.map((c) => c.name).join(',');
  let entry = together.get(key);
  if (entry === undefined) {
    let shift = 0;
    const parts: string[] = [];
    for (const c of compiled) {
      const text = shiftParameters(c.query.sql, shift);
      if (text === null) break;
      parts.push(`(select coalesce(${(c.json as JsonReading).aggregate}, '[]') from (${text}) q)`);
      shift += c.query.parameters.length;
    }
    // Past the bound, combinations run unnamed: PostgreSQL keeps a named statement per connection.
    entry = parts.length < compiled.length ? null : {
      name: together.size < MAX_NAMED_TOGETHER ? `kiln_together_${together.size + 1}` : undefined,
      text: `select json_build_array(${parts.join(', ')})::text as rows`,
      readings: compiled.map((c) => c.json as JsonReading),
    };
    if (together.size < MAX_NAMED_TOGETHER) together.set(key, entry);
  }
  return entry;
}

/**
 * `sql` with each `$n` placeholder moved up by `by`, read outside quoted strings and identifiers;
 * null for text this does not read (dollar quoting, comments), which then runs on its own.
 */
function shiftParameters(sql: string, by: number): string | null {
  let out = '';
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quote !== null) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '$') {
      let end = i + 1;
      while (end < sql.length && sql.charCodeAt(end) >= 48 && sql.charCodeAt(end) <= 57) end++;
      if (end === i + 1) return null;
      out += `$${Number(sql.slice(i + 1, end)) + by}`;
      i = end - 1;
    } else if ((ch === '-' && sql[i + 1] === '-') || (ch === '/' && sql[i + 1] === '*')) {
      return null;
    } else {
      out += ch;
    }
  }
  return quote === null ? out : null;
}

/**
 * How a statement's rows are read as one JSON text: `select coalesce(json_agg(json_build_array(
 * q."id", …)), '[]') from (<statement>) q`, each row an array of its values in column order, made
 * into an object named as pg names its fields (rowMaker). The aggregate keeps the statement's
 * order (nothing outside it joins or sorts: PostgreSQL, "Aggregate Functions", on input from a
 * sorted subquery).
 */
interface JsonReading {
  name: string;
  text: string;
  /** The aggregate of a subquery `q`'s rows: `json_agg(json_build_array(q."id", …))` or `json_agg(q)`. */
  aggregate: string;
  /** Makes a row from its values in column order; null when the aggregate writes objects. */
  row: ((values: unknown[]) => Record<string, unknown>) | null;
  /** Columns of a floating type: JSON writes NaN and the infinities as strings. */
  floats: string[];
}

// Column types whose JSON reads back as the value pg's parsers give (int8 is read as a number:
// database.ts): integers, text, booleans, json, and floats with the fix-up above.
const INT2 = 21, INT4 = 23, INT8 = 20, TEXT = 25, VARCHAR = 1043, BPCHAR = 1042, BOOL = 16;
const JSON_TYPE = 114, JSONB = 3802, FLOAT4 = 700, FLOAT8 = 701;
const JSON_SAFE = new Set([INT2, INT4, INT8, TEXT, VARCHAR, BPCHAR, BOOL, JSON_TYPE, JSONB, FLOAT4, FLOAT8]);

/** The JSON reading of `c`, or false when a column's JSON would read back differently (a timestamp, numeric, bytea). */
function jsonReading(c: Compiled, fields: readonly { name: string; dataTypeID: number }[]): JsonReading | false {
  if (fields.length === 0 || fields.some((f) => !JSON_SAFE.has(f.dataTypeID))) return false;
  // Row locks cannot sit under an aggregate.
  if (/\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i.test(c.query.sql)) return false;
  const { aggregate, row } = rowsAggregate(fields.map((f) => f.name));
  return {
    name: `${c.name}_json`,
    text: `select coalesce(${aggregate}, '[]')::text as rows from (${c.query.sql}) q`,
    aggregate,
    row,
    floats: fields.filter((f) => f.dataTypeID === FLOAT4 || f.dataTypeID === FLOAT8).map((f) => f.name),
  };
}

/** json_build_array takes at most 100 arguments (PostgreSQL's FUNC_MAX_ARGS). */
const MAX_ARRAY_COLUMNS = 100;

/**
 * A function making a row object from its values in the order of `names`, the object literal
 * written out once: a page read as arrays and made into rows so costs a third of the same page
 * read as JSON objects (bench/serialise.ts, 21 users of 39 columns: 16 KB of objects parsed in
 * 20 µs, 5.7 KB of arrays parsed and made into rows in 10 µs), and PostgreSQL writes and sends a
 * third of the text. The rows have pg's shape (every column, named as the statement names it), and
 * are objects of one fixed shape. Null (objects are read instead) when the
 * names repeat (a subquery's columns cannot be told apart), are too many for json_build_array, or
 * one is `__proto__` (which an object literal takes for the prototype).
 */
export function rowMaker(names: readonly string[]): ((values: unknown[]) => Record<string, unknown>) | null {
  if (names.length > MAX_ARRAY_COLUMNS || new Set(names).size !== names.length || names.includes('__proto__')) return null;
  // Each key is a JSON string literal, which JavaScript reads as the same string: the names come
  // from the statement's own RowDescription, and no text of theirs is read as code.
  return new Function(
    'v', `return { ${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')} };`,
  ) as (values: unknown[]) => Record<string, unknown>;
}

/** `name` as a quoted PostgreSQL identifier. */
const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The aggregate of a subquery `q` whose columns are `names`, and what makes each of its rows: rows
 * as arrays made by rowMaker, or, where rowMaker cannot, `json_agg(q)`'s objects as they are.
 */
export function rowsAggregate(names: readonly string[]): Pick<JsonReading, 'aggregate' | 'row'> {
  const row = rowMaker(names);
  return { aggregate: row ? `json_agg(json_build_array(${names.map((n) => `q.${quoteIdentifier(n)}`).join(', ')}))` : 'json_agg(q)', row };
}

/** The rows of a reading's aggregate, parsed: made from arrays, or the objects as written. */
function readRows(reading: JsonReading, parsed: unknown[]): Record<string, unknown>[] {
  const rows = reading.row ? (parsed as unknown[][]).map(reading.row) : (parsed as Record<string, unknown>[]);
  restoreFloats(rows, reading.floats);
  return rows;
}

async function readAsJson<O>(pool: pg.Pool, reading: JsonReading, parameters: unknown[]): Promise<O[]> {
  const result = await pool.query<{ rows: string }>({ name: reading.name, text: reading.text, values: parameters });
  return readRows(reading, JSON.parse(result.rows[0].rows) as unknown[]) as O[];
}

function restoreFloats(rows: Record<string, unknown>[], floats: string[]): void {
  for (const column of floats) {
    for (const row of rows) if (typeof row[column] === 'string') row[column] = Number(row[column]);
  }
}
