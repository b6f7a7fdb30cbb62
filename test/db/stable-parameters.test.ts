/**
 * kiln's SQLite statements write each bound parameter as `+?` (src/db/database.ts,
 * StableParameterCompiler), so that SQLite plans a statement once instead of preparing it again
 * on every run. That is only sound if `+?` means what `?` means for every value kiln binds: these
 * compare the two spellings, value by value, in the places kiln puts parameters.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';

const VALUES: unknown[] = [null, 0, 1, -1, 2 ** 31, 2 ** 53 - 1, 1.5, '', '1', '01', ' 1', 'a', 'A', 'é', 'a\u0000b', Buffer.from([0, 1, 255]), Buffer.alloc(0)];

describe('parameters written as +? on SQLite', () => {
  it('are written so by the query compiler, in filters, values and limits alike', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-params-'));
    const database = openDatabase({ databaseUrl: null, dataDir });
    try {
      const compiled = database.db.selectFrom('users').select('id').where('username', '=', 'a').where('id', 'in', [1, 2]).limit(20).offset(40).compile();
      assert.equal(compiled.sql, 'select "id" from "users" where "username" = +? and "id" in (+?, +?) limit +? offset +?');
      assert.deepEqual(compiled.parameters, ['a', 1, 2, 20, 40]);
      const raw = sql`select ${'x'} as v`.compile(database.db);
      assert.equal(raw.sql, 'select +? as v');
      assert.deepEqual((await sql<{ v: string }>`select ${'x'} as v`.execute(database.db)).rows, [{ v: 'x' }]);
    } finally {
      await database.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('compare, store, match and limit exactly as ? does, for every kind of value and column affinity', () => {
    const db = new SQLite(':memory:');
    db.exec(`create table t (i integer, r real, s text, b blob, n numeric, x)`);
    const insert = db.prepare('insert into t values (?, ?, ?, ?, ?, ?)');
    for (const v of VALUES) insert.run(v, v, v, v, v, v);
    db.exec('create index t_s on t (s); create index t_i on t (i, s)');
    const both = (query: string, ...args: unknown[]) => {
      const bare = db.prepare(query).all(...args);
      const plus = db.prepare(query.replaceAll('?', '+?')).all(...args);
      assert.deepEqual(plus, bare, `${query} with ${String(args[0])}`);
      return bare;
    };
    let matched = 0;
    for (const v of VALUES) {
      for (const column of ['i', 'r', 's', 'b', 'n', 'x']) {
        for (const op of ['=', '<', '>=', 'is', 'is not', '!=']) matched += both(`select rowid, typeof(${column}) as t from t where ${column} ${op} ? order by rowid`, v).length;
        both(`select rowid from t where ${column} in (?, ?) order by rowid`, v, 1);
        both(`select rowid from t where ? = ${column} order by rowid`, v);
        if (typeof v === 'string') both(`select rowid from t where ${column} like ? order by rowid`, v);
      }
      // Stored through a column's affinity and read back: the same type and value.
      both('select ? as v, typeof(?) as t, cast(? as integer) as c, coalesce(?, 7) as d, ? || \'\' as e', v, v, v, v, v);
    }
    assert.ok(matched > 100, `only ${matched} rows compared`);
    // As a LIMIT and an OFFSET, and in an ordered range read through an index.
    for (const [limit, offset] of [[0, 0], [1, 0], [3, 2], [-1, 1], [100, 50]]) {
      both('select rowid from t order by rowid desc limit ? offset ?', limit, offset);
      both('select rowid from t where i = ? order by s desc limit ?', 1, limit);
    }
    db.close();
  });
});
