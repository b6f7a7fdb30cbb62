/** The query strings of Link URLs (src/http/lists/pagination.ts toQuery): Rails' to_query, read back by qs. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import qs from 'qs';
import { toQuery } from '../../src/http/lists/pagination.ts';
import { QS_OPTIONS } from '../../src/http/plugins/body-parsers.ts';

describe('toQuery', () => {
  it('sorts keys and writes scalars, nulls, arrays and hashes as Rails does', () => {
    assert.equal(toQuery({ sort: 'desc', active: true, page: 2, search: 'a b&c', blank: null, skipped: undefined }),
      'active=true&blank=&page=2&search=a%20b%26c&sort=desc');
    assert.equal(toQuery({ ids: [1, 2], attrs: { z: '1', a: '2' } }), 'attrs%5Ba%5D=2&attrs%5Bz%5D=1&ids%5B%5D=1&ids%5B%5D=2');
  });

  it('writes arrays of hashes with indexes, the spec\'s name[0][key]=v', () => {
    assert.equal(toQuery({ items: [{ key: 'a', value: '1' }, { key: 'b' }] }),
      'items%5B0%5D%5Bkey%5D=a&items%5B0%5D%5Bvalue%5D=1&items%5B1%5D%5Bkey%5D=b');
  });

  it('round-trips through the query parser kiln uses', () => {
    const params = { items: [{ key: 'a', value: '1' }, { key: 'b' }], ids: ['1', '2'], attrs: { k: 'v' }, at: '2024-01-02T03:04:05.000+02:00' };
    assert.deepEqual(qs.parse(toQuery(params), QS_OPTIONS), params);
  });
});
