/**
 * The floor under a computed list page (bench/floor.ts): a bare node:http server that does only
 * what no implementation of a page can skip, on the pages FLOOR_SPEC names (a JSON file: for each
 * name, the SQLite statements kiln ran for the page and the body it answered).
 *
 *   /bytes/<name>  the answer's bytes, as they are: the socket alone
 *   /json/<name>   the answer written by JSON.stringify from objects on every request
 *   /sql/<name>    the page's statements run on the SQLite file (rows made into objects by
 *                  better-sqlite3), then as /json: the floor of a computed page
 *
 * No routing, authentication, access checks or presenting: what kiln spends above /sql is that.
 * With `databaseUrl` the statements run on PostgreSQL: named, on a pool of 10 connections, each
 * one's rows read as kiln reads a compiled statement's (src/db/prepared.ts: rows as JSON arrays
 * made into objects; kiln's lookups run together are one JSON text already, sent as they are).
 */
import fs from 'node:fs';
import http from 'node:http';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { rowsAggregate } from '../src/db/prepared.ts';

interface Page {
  body: string;
  statements: { sql: string; parameters: unknown[] }[];
}

export interface FloorSpec {
  sqliteFile: string | null;
  databaseUrl: string | null;
  pages: Record<string, Page>;
}

const spec = JSON.parse(fs.readFileSync(process.env.FLOOR_SPEC ?? '', 'utf8')) as FloorSpec;
const file = spec.sqliteFile ? new SQLite(spec.sqliteFile, { readonly: true }) : null;
const pool = spec.databaseUrl ? new pg.Pool({ connectionString: spec.databaseUrl, max: 10 }) : null;
let named = 0;

/**
 * A statement as the floor runs it: its rows' count, read the way kiln reads them. On PostgreSQL
 * its columns are learnt from one run, and it is then read as kiln reads a compiled statement:
 * rows as JSON arrays made into objects (rowsAggregate).
 */
async function runner(sql: string, parameters: unknown[]): Promise<() => number | Promise<number>> {
  if (file) {
    const stmt = file.prepare(sql);
    return () => stmt.all(...parameters).length;
  }
  let text = sql;
  let row: ((values: unknown[]) => Record<string, unknown>) | null = null;
  // kiln's lookups run together are one JSON text already.
  if (!sql.startsWith('select json_build_array(')) {
    const reading = rowsAggregate((await pool!.query(sql, parameters)).fields.map((f) => f.name));
    row = reading.row;
    text = `select coalesce(${reading.aggregate}, '[]')::text from (${sql}) q`;
  }
  const query = { name: `floor_${named++}`, text, values: parameters, rowMode: 'array' as const };
  return async () => {
    const result = await pool!.query<[string | unknown[]]>(query);
    const value = result.rows[0][0];
    const parsed = typeof value === 'string' ? JSON.parse(value) as unknown[] : value;
    return (row ? (parsed as unknown[][]).map(row) : parsed).length;
  };
}

const pages = new Map(await Promise.all(Object.entries(spec.pages).map(async ([name, page]) => [name, {
  bytes: Buffer.from(page.body),
  // JSON.parse makes flat strings, as rows read from SQLite are: JSON.stringify's fast path.
  value: JSON.parse(page.body) as unknown,
  statements: await Promise.all(page.statements.map((s) => runner(s.sql, s.parameters))),
}] as const)));

const server = http.createServer(async (req, res) => {
  const [, mode, name] = (req.url ?? '').split('/');
  const page = pages.get(name);
  if (!page) {
    res.writeHead(404).end();
    return;
  }
  if (mode === 'bytes') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': page.bytes.length });
    res.end(page.bytes);
    return;
  }
  let rows = 0;
  if (mode === 'sql') {
    for (const run of page.statements) {
      const n = run();
      rows += typeof n === 'number' ? n : await n;
    }
  }
  const body = JSON.stringify(page.value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-rows': rows });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
// A statement that fails ends the run loudly rather than answering a short floor.
process.on('unhandledRejection', (err) => {
  console.error(err);
  process.exit(1);
});
