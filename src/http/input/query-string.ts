/**
 * Query strings as Rack reads them (qs with kiln's limits: `a[]=1`, `a[b]=1`), with a fast path
 * for the common case. Most query strings are a few plain `key=value` pairs (`per_page=20&page=2`),
 * for which qs still normalises its options and walks its bracket and charset logic: ~8 µs of a
 * list request. Without `%`, `+` or brackets and with no key Object.prototype has, qs's result is
 * the plain split below (duplicate keys gather into an array, a key without `=` is ''), so that is
 * what the fast path returns; everything else goes to qs (test/domain/query-string.test.ts
 * compares the two).
 */
import qs from 'qs';
import { QS_OPTIONS } from '../plugins/body-parsers.ts';

const PLAIN = /^[A-Za-z0-9_.~=&-]*$/;
/** Well under qs's parameterLimit; longer strings take qs's path. */
const MAX_PLAIN_PAIRS = 100;

export function parseQueryString(s: string): Record<string, unknown> {
  if (s === '') return {};
  return plainQuery(s) ?? qs.parse(s, QS_OPTIONS);
}

function plainQuery(s: string): Record<string, unknown> | null {
  if (s.length > 4096 || !PLAIN.test(s)) return null;
  const out: Record<string, unknown> = {};
  let pairs = 0;
  for (const part of s.split('&')) {
    if (part === '') continue;
    if (++pairs > MAX_PLAIN_PAIRS) return null;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    if (key === '') continue;
    if (key in Object.prototype) return null;
    const before = out[key];
    if (before === undefined) out[key] = value;
    else if (Array.isArray(before)) before.push(value);
    else out[key] = [before, value];
  }
  return out;
}
