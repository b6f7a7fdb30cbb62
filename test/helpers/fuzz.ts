/**
 * The schema-driven fuzzer's parts (issue 13): a seeded random source, the hostile values sent
 * per parameter, per path segment and per route, and how a value is put into a query string, a
 * JSON body or a Rails form. Nothing here knows a route: the OpenAPI document says what exists.
 */
import qs from 'qs';

/** mulberry32: small, fast and the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, list: readonly T[], count: number): T[] {
  const pool = [...list];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
  return out;
}

/**
 * A hostile value for one parameter. `json` is what a JSON body carries; `query` is the raw,
 * already encoded `name=value` text for a query string or a form (null: JSON only).
 */
export interface FuzzValue {
  name: string;
  json?: unknown;
  query?: (key: string) => string;
}

const enc = encodeURIComponent;
const raw = (v: string) => (key: string) => `${enc(key)}=${v}`;
const text = (v: string) => (key: string) => `${enc(key)}=${enc(v)}`;
const nested = (depth: number): unknown => (depth === 0 ? 'x' : { a: nested(depth - 1) });
const MB = 1024 * 1024;
/**
 * Letters that do not compress: PostgreSQL compresses a long index entry before it checks the
 * entry's size, so 3000 equal letters would fit where 3000 varied ones do not.
 */
export function incompressible(length: number): string {
  const random = seededRandom(length);
  let s = '';
  while (s.length < length) s += String.fromCharCode(97 + Math.floor(random() * 26));
  return s;
}
const LONG = incompressible(3000);

/** Sent for every parameter (the cases that found 500s before). */
export const ALWAYS: readonly FuzzValue[] = [
  { name: 'nul', json: 'a\u0000b', query: raw('a%00b') },
  { name: '3000 characters', json: LONG, query: text(LONG) },
  { name: '2^31', json: 2 ** 31, query: raw('2147483648') },
];

/** Sent for a seeded sample of each parameter (FUZZ_CASES per parameter; `all` for every one). */
export const SAMPLED: readonly FuzzValue[] = [
  { name: 'control characters', json: '\u0001\u0008\u001b\u007f\t\r\n', query: raw('%01%08%1B%7F%09%0D%0A') },
  { name: 'lone surrogate', json: 'x\ud800y' },
  { name: 'invalid UTF-8', query: raw('%FF%FE%C3%28') },
  { name: '1 MB string', json: incompressible(MB + 1) },
  { name: '100 KB string', json: incompressible(100 * 1024) },
  { name: '2^63', json: 9223372036854775808, query: raw('9223372036854775808') },
  { name: '-2^31-1', json: -(2 ** 31) - 1, query: raw('-2147483649') },
  { name: 'negative', json: -1, query: raw('-1') },
  { name: 'zero', json: 0, query: raw('0') },
  { name: 'fraction', json: 1.5, query: raw('1.5') },
  { name: '1e308', json: 1e308, query: raw('1e309') },
  { name: 'boolean', json: true, query: raw('true') },
  { name: 'number for a string', json: 12345, query: raw('12345') },
  { name: 'array', json: ['a', 'b'], query: (k) => `${enc(k)}[]=a&${enc(k)}[]=b` },
  { name: 'array of numbers', json: [1, 2 ** 31], query: (k) => `${enc(k)}[]=1&${enc(k)}[]=2147483648` },
  { name: 'object', json: { a: 'b' }, query: (k) => `${enc(k)}[a]=b` },
  { name: 'deep JSON', json: nested(200) },
  { name: 'deep brackets', query: (k) => `${enc(k)}${'[a]'.repeat(40)}=x` },
  { name: 'empty', json: '', query: raw('') },
  { name: 'null', json: null, query: (k) => enc(k) },
  { name: 'duplicate', query: (k) => `${enc(k)}=1&${enc(k)}=2` },
  { name: 'dot dot', json: '..', query: raw('..') },
  { name: 'dot', json: '.', query: raw('.') },
  { name: 'ends in .git', json: 'fuzz.git', query: raw('fuzz.git') },
  { name: 'path traversal', json: '../../etc/passwd', query: raw('..%2F..%2Fetc%2Fpasswd') },
  { name: 'bad ref', json: 'refs/heads/a..b@{x}.lock', query: raw('a..b%40%7Bx%7D.lock') },
  { name: 'leading dash', json: '--upload-pack=touch /tmp/x', query: raw('--upload-pack%3Dtouch') },
  { name: 'impossible date', json: '2024-02-30', query: raw('2024-02-30') },
  { name: 'impossible time', json: '2024-01-01T25:61:00Z', query: raw('2024-01-01T25%3A61%3A00Z') },
  { name: 'emoji and RTL', json: '😀\u202etxt', query: text('😀\u202etxt') },
  { name: 'long email', json: `${LONG}@example.org`, query: text(`${LONG}@example.org`) },
  { name: '300 characters', json: 'c'.repeat(300), query: text('c'.repeat(300)) },
  { name: 'SQL-ish', json: "' or 1=1 --%_", query: text("' or 1=1 --%_") },
];

/** Path segments (already encoded) sent in place of each path parameter. */
export const PATH_SEGMENTS: readonly string[] = [
  '%00', 'a%00b', '2147483648', '9223372036854775808', '-1', '0', '1.5', '%2E%2E', '..%2F..', '%FF', 'a'.repeat(255), '%20',
];

/**
 * Ids as a path segment, a GraphQL global id or a SCIM value may carry them (issue 35, item 13):
 * past PostgreSQL's `integer` (2^31, 2^32, 2^63, twenty digits), negative, zero, padded, and
 * spellings that are numbers to some parsers only.
 */
export const HOSTILE_IDS: readonly string[] = [
  '2147483648', '4294967296', '9223372036854775808', '99999999999999999999', '-1', '0', '00000000002147483648', '1e3', '0x10', '1.0',
];

/** Text that no column can hold, or should not: the values of a JSON body or a GraphQL variable. */
export const HOSTILE_TEXT: readonly { name: string; value: string }[] = [
  { name: 'nul', value: 'a\u0000b' },
  { name: 'lone high surrogate', value: 'x\ud800y' },
  { name: 'lone low surrogate', value: '\udfffz' },
  { name: '3000 characters', value: LONG },
  { name: '100 KB string', value: incompressible(100 * 1024) },
  { name: 'control characters', value: '\u0001\u0008\u001b\u007f\t\r\n' },
  { name: 'emoji and RTL', value: '😀\u202etxt' },
  { name: 'SQL-ish', value: "' or 1=1 --%_" },
  { name: 'empty', value: '' },
  { name: '2^31 as text', value: '2147483648' },
];

/** Whole-request cases per route: bodies and content types a client might get wrong. */
export interface RouteCase {
  name: string;
  contentType?: string;
  body?: string | Buffer;
  query?: string;
}

export const ROUTE_CASES: readonly RouteCase[] = [
  { name: 'malformed JSON', contentType: 'application/json', body: '{"a":' },
  { name: 'JSON array body', contentType: 'application/json', body: '[1,2,3]' },
  { name: 'JSON scalar body', contentType: 'application/json', body: '"x"' },
  { name: 'JSON null body', contentType: 'application/json', body: 'null' },
  { name: 'empty JSON body', contentType: 'application/json', body: '' },
  { name: 'text body', contentType: 'text/plain', body: 'hello' },
  { name: 'XML body', contentType: 'application/xml', body: '<a>1</a>' },
  { name: 'form with deep brackets', contentType: 'application/x-www-form-urlencoded', body: `a${'[b]'.repeat(50)}=1&c[]=1&c[x]=2` },
  { name: 'broken multipart', contentType: 'multipart/form-data; boundary=zz', body: '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\nx' },
  { name: 'empty body', contentType: undefined, body: '' },
  { name: 'invalid UTF-8 in JSON', contentType: 'application/json', body: Buffer.from('{"a":"\xff\xfe\xc3("}', 'latin1') },
  { name: 'JSON in UTF-16', contentType: 'application/json; charset=utf-16', body: Buffer.from('{"a":1}', 'utf16le') },
  { name: 'JSON nested 100000 deep', contentType: 'application/json', body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
  { name: 'sudo NUL', query: 'sudo=%00' },
  { name: 'sudo 2^31', query: 'sudo=2147483648' },
  { name: 'sudo 1 KB', query: `sudo=${'s'.repeat(1000)}` },
];

/** JSON body text of `params`, with `key` set to the fuzzed value. */
export function jsonBody(params: Record<string, unknown>): string {
  return JSON.stringify(params);
}

/** A query string or form of plain valid values, plus the fuzzed parameter's own raw text. */
export function formText(params: Record<string, unknown>, fuzzed?: string): string {
  const base = qs.stringify(params, { arrayFormat: 'brackets' });
  return [base, fuzzed].filter((s) => s).join('&');
}
