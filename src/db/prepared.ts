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
    const fresh: Compiled = { query, name: `kiln_prepared_${statements}`, json: null, slots, statements: new WeakMap<SQLite.Database, SQLite.Statement>() };
    if (isPostgres) postgres = fresh;
    else sqlite = fresh;
    return fresh;
  }

  async function all(db: Kysely<DB>, args: readonly unknown[]): Promise<O[]> {
    const c = compiled(db);
    const parameters = c.slots.map((slot, i) => (slot >= 0 ? args[slot] : c.query.parameters[i]));
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

  return {
    all,
    first: async (db, args) => (await all(db, args))[0],
  };
}

/**
 * How a statement's rows are read as one JSON text: `select coalesce(json_agg(q), '[]') from
 * (<statement>) q`. The aggregate keeps the statement's order (nothing outside it joins or sorts:
 * PostgreSQL, "Aggregate Functions", on input from a sorted subquery), and its objects have the
 * statement's column names, as pg's rows do.
 */
interface JsonReading {
  name: string;
  text: string;
  /** Columns of a floating type: JSON writes NaN and the infinities as strings. */
  floats: string[];
}

// Column types whose JSON reads back as the value pg's parsers give (int8 is read as a number:
// database.ts): integers, text, booleans, json, and floats with the fix-up above.
const INT2 = 21, INT4 = 23, INT8 = 20, TEXT = 25, VARCHAR = 1043, BPCHAR = 1042, BOOL = 16, JSON_TYPE = 114, JSONB = 3802, FLOAT4 = 700, FLOAT8 = 701;
const JSON_SAFE = new Set([INT2, INT4, INT8, TEXT, VARCHAR, BPCHAR, BOOL, JSON_TYPE, JSONB, FLOAT4, FLOAT8]);

/** The JSON reading of `c`, or false when a column's JSON would read back differently (a timestamp, numeric, bytea). */
function jsonReading(c: Compiled, fields: readonly { name: string; dataTypeID: number }[]): JsonReading | false {
  if (fields.length === 0 || fields.some((f) => !JSON_SAFE.has(f.dataTypeID))) return false;
  // Row locks cannot sit under an aggregate.
  if (/\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i.test(c.query.sql)) return false;
  return {
    name: `${c.name}_json`,
    text: `select coalesce(json_agg(q), '[]')::text as rows from (${c.query.sql}) q`,
    floats: fields.filter((f) => f.dataTypeID === FLOAT4 || f.dataTypeID === FLOAT8).map((f) => f.name),
  };
}

async function readAsJson<O>(pool: pg.Pool, reading: JsonReading, parameters: unknown[]): Promise<O[]> {
  const result = await pool.query<{ rows: string }>({ name: reading.name, text: reading.text, values: parameters });
  const rows = JSON.parse(result.rows[0].rows) as Record<string, unknown>[];
  for (const column of reading.floats) {
    for (const row of rows) if (typeof row[column] === 'string') row[column] = Number(row[column]);
  }
  return rows as O[];
}
