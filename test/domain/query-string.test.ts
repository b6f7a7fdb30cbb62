/**
 * The query-string fast path (src/http/input/query-string.ts) answers exactly as qs does with kiln's
 * options, for every string it takes; the rest goes to qs itself.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import qs from 'qs';
import { parseQueryString } from '../../src/http/input/query-string.ts';
import { QS_OPTIONS } from '../../src/http/plugins/body-parsers.ts';

describe('parseQueryString', () => {
  it('reads what qs reads, for plain strings and for the ones it leaves to qs', () => {
    const samples = [
      'per_page=20', 'page=2&per_page=100', 'a=1&a=2&a=3', 'a&b=&c=3', '=x&y=1', 'a=b=c', '&&a=1&&', 'scope=failed&scope=success',
      'order_by=id&sort=asc&search=bench', 'a.b=1', 'x-y=~z', 'toString=1', '__proto__=1', 'constructor=2&a=1', 'hasOwnProperty=3',
      'scope[]=failed&scope[]=success', 'custom_attributes[k]=v', 'a=%20b', 'a=b+c', 'search=caf%C3%A9', 'a[0][b]=1', '',
    ];
    // And a few thousand random strings over the plain alphabet and its neighbours.
    const alphabet = 'ab1_.-~=&=&%+[]';
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 3000; i++) {
      samples.push(Array.from({ length: 1 + Math.floor(random() * 24) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
    }
    for (const s of samples) {
      let expected: unknown;
      try {
        expected = qs.parse(s, QS_OPTIONS);
      } catch {
        continue; // malformed percent-encoding: qs's own answer, on its own path
      }
      assert.deepEqual({ ...parseQueryString(s) }, { ...(expected as object) }, s);
    }
  });
});
