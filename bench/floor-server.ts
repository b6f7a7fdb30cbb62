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
 */
import fs from 'node:fs';
import http from 'node:http';
import SQLite from 'better-sqlite3';

interface Page {
  body: string;
  statements: { sql: string; parameters: unknown[] }[];
}

const spec = JSON.parse(fs.readFileSync(process.env.FLOOR_SPEC!, 'utf8')) as { sqliteFile: string; pages: Record<string, Page> };
const file = new SQLite(spec.sqliteFile, { readonly: true });
const pages = new Map(Object.entries(spec.pages).map(([name, page]) => [name, {
  bytes: Buffer.from(page.body),
  // JSON.parse makes flat strings, as rows read from SQLite are: JSON.stringify's fast path.
  value: JSON.parse(page.body) as unknown,
  statements: page.statements.map((s) => ({ stmt: file.prepare(s.sql), parameters: s.parameters })),
}]));

const server = http.createServer((req, res) => {
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
  if (mode === 'sql') for (const s of page.statements) rows += s.stmt.all(...s.parameters).length;
  const body = JSON.stringify(page.value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-rows': rows });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
