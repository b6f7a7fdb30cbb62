/**
 * Prepared reads on PostgreSQL (src/db/prepared.ts) read their rows as one JSON text once their
 * first run has shown column types whose JSON reads back as pg reads them. These check that a
 * statement answers the same rows, in the same order and of the same types, either way, and that
 * a statement with a column JSON would change (a timestamp, a numeric) stays as pg reads it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { param, prepared, readTogether } from '../../src/db/prepared.ts';
import { testDialect, createPostgresDatabase } from '../helpers/app.ts';

const postgresOnly = testDialect() !== 'postgres' ? 'PostgreSQL only: SQLite reads through better-sqlite3' : false;

const TEXTS = ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab\r', 'é ü 漢字 🎉', '\u0001\u001f control', '</script>', 'null', '[]', '{"a":1}'];

describe('prepared reads on PostgreSQL, as JSON', { skip: postgresOnly }, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let dataDir: string;
  let url: string;
  // The checks' own table, outside kiln's schema types.
  let db: Kysely<any>;

  before(async () => {
    const pgdb = await createPostgresDatabase();
    drop = pgdb.drop;
    url = pgdb.url;
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-prepared-'));
    database = openDatabase({ databaseUrl: pgdb.url, dataDir });
    db = database.db as Kysely<any>;
    await sql`create table checks (id integer primary key, small smallint, big bigint, t text, v varchar(40), b boolean, f double precision, r real, j json, jb jsonb, n integer, at timestamptz, num numeric)`.execute(db);
    const floats = [0, -0.5, 1e300, 5e-324, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null];
    for (let i = 1; i <= 60; i++) {
      const f = floats[i % floats.length];
      await sql`insert into checks values (${i}, ${i % 3 === 0 ? null : -i}, ${i === 7 ? 2 ** 53 - 1 : i * 1_000_000_007}, ${TEXTS[i % TEXTS.length]}, ${`v${i}`}, ${i % 2 === 0},
        ${f === null ? null : sql`${String(f)}::double precision`}, ${i % 5 === 0 ? null : sql`${String(f === 1e300 || f === 5e-324 ? 3.25 : f ?? 1.25)}::real`},
        ${i % 4 === 0 ? null : JSON.stringify({ i, t: TEXTS[i % TEXTS.length], nested: [1, 'two', null] })}, ${JSON.stringify([i, { k: 'v' }])},
        ${i % 6 === 0 ? null : i}, ${new Date(1_700_000_000_000 + i * 1000).toISOString()}, ${`${i}.50`})`.execute(db);
    }
  });
  after(async () => {
    await database?.close();
    await drop?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const columns = ['id', 'small', 'big', 't', 'v', 'b', 'f', 'r', 'j', 'jb', 'n'] as const;
  /** The statement as pg reads it, on a connection of its own. */
  const plainRows = async (text: string, values: unknown[]) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };

  const preparedTexts = async () => (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);

  it('answers the same rows, types and order as pg does, for every column type it reads as JSON', async () => {
    const page = prepared((k) => (k as Kysely<any>).selectFrom('checks').select([...columns]).where('id', '>', param<number>(0)).orderBy('id', 'desc').limit(param<number>(1)));
    // The first run shows the column types (pg's reading); the next ones read JSON.
    const first = await page.all(database.db, [0, 100]);
    const second = await page.all(database.db, [0, 100]);
    assert.equal(first.length, 60);
    assert.deepEqual(second, first);
    // The second run was read as JSON: its statement is prepared on the connection (the pool
    // hands a sequential caller the connection it released last).
    assert.ok((await preparedTexts()).some((t) => t.startsWith('select coalesce(json_agg(json_build_array(q."id", q."small"') && t.includes('"checks"')), 'no JSON statement prepared');
    const expected = await plainRows(`select ${columns.join(', ')} from checks where id > $1 order by id desc limit $2`, [0, 100]);
    assert.deepEqual(second, expected);
    // The values themselves, as pg gives them: numbers, strings, booleans, parsed json, NaN and the infinities.
    const byId = new Map(second.map((r) => [(r as { id: number }).id, r as Record<string, unknown>]));
    assert.equal(byId.get(7)!.big, 2 ** 53 - 1);
    assert.ok(Number.isNaN(byId.get(4)!.f as number));
    assert.equal(byId.get(5)!.f, Number.POSITIVE_INFINITY);
    assert.equal(byId.get(6)!.f, Number.NEGATIVE_INFINITY);
    assert.equal(byId.get(7)!.f, null);
    assert.equal(byId.get(2)!.f, 1e300);
    assert.equal(byId.get(3)!.f, 5e-324);
    assert.deepEqual(byId.get(1)!.j, { i: 1, t: TEXTS[1], nested: [1, 'two', null] });
    assert.deepEqual(byId.get(2)!.jb, [2, { k: 'v' }]);
    // An empty answer, a page, and a single row.
    assert.deepEqual(await page.all(database.db, [1_000, 100]), []);
    assert.deepEqual((await page.all(database.db, [10, 3])).map((r) => (r as { id: number }).id), [60, 59, 58]);
    assert.equal((await page.first(database.db, [59, 1]) as { id: number }).id, 60);
  });

  it('keeps pg\'s reading for a statement with a column JSON would change', async () => {
    const stamped = prepared((k) => (k as Kysely<any>).selectFrom('checks').select(['id', 'at', 'num']).where('id', '=', param<number>(0)));
    for (let run = 0; run < 3; run++) {
      const [row] = await stamped.all(database.db, [3]) as { id: number; at: unknown; num: unknown }[];
      // pg's own types: a Date for timestamptz and a string for numeric, on every run.
      assert.ok(row.at instanceof Date, `run ${run}: ${String(row.at)}`);
      assert.equal(row.num, '3.50');
    }
    assert.ok(!(await preparedTexts()).some((t) => t.startsWith('select coalesce(json_agg(') && t.includes('"num"')), 'a timestamp read as JSON');
  });

  it('reads several statements in one round trip, each with its own parameters, rows and order', async () => {
    const k = database.db as Kysely<any>;
    const byText = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id', 't', 'f']).where('t', '=', param<string>(0)).where('v', '!=', sql.lit('$1 is text, "$2" too')).orderBy('id'));
    const page = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id', 'jb']).where('id', '>', param<number>(0)).where('id', '<=', param<number>(1)).orderBy('id', 'desc'));
    const none = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id']).where('id', '<', param<number>(0)));
    const reads = [{ statement: byText, args: [TEXTS[4]] }, { statement: page, args: [10, 15] }, { statement: none, args: [0] }];
    // Not read yet: one after another (each learns its JSON reading); then together.
    const apart = await readTogether(k, reads);
    const joined = await readTogether(k, reads);
    assert.deepEqual(joined, apart);
    assert.deepEqual((joined[0] as { id: number }[]).map((r) => r.id), [4, 14, 24, 34, 44, 54]);
    assert.ok((joined[0] as { f: unknown }[]).some((r) => Number.isNaN(r.f)), 'NaN restored in the first part');
    assert.deepEqual((joined[1] as { id: number }[]).map((r) => r.id), [15, 14, 13, 12, 11]);
    assert.deepEqual(joined[2], []);
    assert.ok((await preparedTexts()).some((t) => t.startsWith('select json_build_array(') && t.includes('$4')), 'no combined statement prepared');
    // Other arguments to the same combination.
    const again = await readTogether(k, [{ statement: byText, args: [TEXTS[0]] }, { statement: page, args: [58, 100] }, { statement: none, args: [3] }]);
    assert.deepEqual(again.map((rows) => (rows as { id: number }[]).map((r) => r.id)), [[10, 20, 30, 40, 50, 60], [60, 59], [1, 2]]);
  });
  it('reads rows as arrays made into objects, and as objects when the names cannot be so read', async () => {
    const k = database.db as Kysely<any>;
    // Names that need quoting, a name that is a JavaScript keyword and one that is an Object method.
    const odd = prepared((d) => (d as Kysely<any>).selectFrom('checks').select([
      'id', sql<string>`t`.as('with "quotes" and spaces'), sql<number>`n`.as('constructor'), sql<boolean>`b`.as('return'), sql<string>`v`.as('é ✓'),
    ]).where('id', '<=', param<number>(0)).orderBy('id'));
    const expected = await plainRows(`select id, t as "with ""quotes"" and spaces", n as "constructor", b as "return", v as "é ✓" from checks where id <= $1 order by id`, [12]);
    await odd.all(database.db, [12]);
    const asArrays = await odd.all(database.db, [12]);
    assert.deepEqual(asArrays, expected);
    assert.ok((await preparedTexts()).some((t) => t.includes('q."with ""quotes"" and spaces"')), 'not read as arrays');
    // Repeated names: pg keeps the last of them, and so does the reading as objects.
    const twice = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id', 't', sql<number>`n`.as('id')]).where('id', '=', param<number>(0)));
    await twice.all(database.db, [5]);
    assert.deepEqual(await twice.all(database.db, [5]), await plainRows('select id, t, n as id from checks where id = $1', [5]));
    // `__proto__` as a name is a column like any other, not the row's prototype.
    const proto = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id', sql<string>`t`.as('__proto__')]).where('id', '=', param<number>(0)));
    await proto.all(database.db, [3]);
    const [row] = await proto.all(database.db, [3]) as Record<string, unknown>[];
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.deepEqual(Object.entries(row), Object.entries((await plainRows('select id, t as "__proto__" from checks where id = $1', [3]))[0] as object));
    // More columns than json_build_array takes (100): read as objects, the same rows.
    const wide = prepared((d) => (d as Kysely<any>).selectFrom('checks').select(['id', ...Array.from({ length: 105 }, (_, i) => sql<number>`id + ${sql.lit(i)}`.as(`c${i}`))]).where('id', '<=', param<number>(0)).orderBy('id'));
    await wide.all(database.db, [3]);
    const wideRows = await wide.all(database.db, [3]) as Record<string, number>[];
    assert.equal(wideRows.length, 3);
    assert.equal(Object.keys(wideRows[0]).length, 106);
    assert.equal(wideRows[2].c104, 3 + 104);
    // Together with a statement read as arrays, each part is made by its own reading.
    const [oddRows, wideAgain] = await readTogether(k, [{ statement: odd, args: [2] }, { statement: wide, args: [1] }]);
    assert.deepEqual(oddRows, expected.slice(0, 2));
    assert.equal((wideAgain[0] as Record<string, number>).c50, 51);
  });
});
