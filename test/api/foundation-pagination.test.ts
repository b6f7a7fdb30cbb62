/**
 * Offset and keyset pagination (reference §7; spec, Pagination details) through a test-only list
 * of users built on paginate()/paginateKeyset(), and through the real GET /users.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyPluginAsync } from 'fastify';
import { keysetParams, keysetRequested, paginate, paginateKeyset, paginationParams } from '../../src/http/lists/pagination.ts';
import { defineParams, P } from '../../src/http/input/params.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { followNext, injectable, parseLink } from '../helpers/pagination.ts';
import { insertUsersBulk } from '../helpers/seed.ts';

const peopleParams = defineParams({
  ...paginationParams,
  ...keysetParams,
  search: P.optional(P.string()),
  labels: P.optional(P.array(P.string())),
  items: P.optional(P.array(P.object({ key: P.string() }))),
  order_by: P.optional(P.oneOf(['id', 'name'] as const, { default: 'id' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc' })),
});

/** A list over the users table whose usernames start with `search`. */
const people: FastifyPluginAsync = async (app) => {
  await app.register(async (api) => {
    api.get('/__people', { config: { auth: 'optional', params: peopleParams } }, async (request, reply) => {
      const input = request.input as { search?: string; order_by: 'id' | 'name'; sort: 'asc' | 'desc' };
      let qb = app.kiln.db.selectFrom('users').select(['id', 'username']);
      if (input.search !== undefined) qb = qb.where('username', 'like', `${input.search}%`);
      if (keysetRequested(request.input)) return paginateKeyset(request, reply, qb, { orderBy: input.order_by, supported: ['id'], sort: input.sort });
      return paginate(app.kiln.db, request, reply, qb.orderBy(input.order_by, input.sort).orderBy('id', input.sort));
    });
  }, { prefix: '/api/v4' });
};

const BASE = 'http://kiln.test/api/v4/__people';

describe('offset and keyset pagination', () => {
  let t: TestApp;
  let ids: number[];
  let kids: number[];

  before(async () => {
    t = await startTestApp({}, { plugins: [people] });
    ids = [];
    for (let i = 1; i <= 25; i++) ids.push((await createUser(t.db, { username: `pg-${String(i).padStart(2, '0')}` })).id);
    kids = [];
    for (let i = 1; i <= 12; i++) kids.push((await createUser(t.db, { username: `ks-${String(i).padStart(2, '0')}` })).id);
  });
  after(async () => { await t.close(); });

  const list = (query: string) => t.request({ url: `/api/v4/__people?${query}` });

  it('serves page 1 with every header and the Link of reference §7.2', async () => {
    const res = await list('search=pg-');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((r: { id: number }) => r.id), ids.slice(0, 20));
    assert.equal(res.headers['x-page'], '1');
    assert.equal(res.headers['x-per-page'], '20');
    assert.equal(res.headers['x-next-page'], '2');
    assert.equal(res.headers['x-prev-page'], '');
    assert.equal(res.headers['x-total'], '25');
    assert.equal(res.headers['x-total-pages'], '2');
    const q = (page: number) => `${BASE}?order_by=id&page=${page}&per_page=20&search=pg-&sort=asc`;
    assert.equal(res.headers.link, `<${q(2)}>; rel="next", <${q(1)}>; rel="first", <${q(2)}>; rel="last"`);
  });

  it('orders prev, next, first, last on a middle page', async () => {
    const res = await list('search=pg-&per_page=10&page=2');
    assert.equal(res.headers['x-prev-page'], '1');
    assert.equal(res.headers['x-next-page'], '3');
    assert.equal(res.headers['x-total-pages'], '3');
    const links = parseLink(res.headers.link);
    assert.deepEqual([...links.keys()], ['prev', 'next', 'first', 'last']);
    assert.equal(links.get('prev'), `${BASE}?order_by=id&page=1&per_page=10&search=pg-&sort=asc`);
    assert.equal(links.get('last'), `${BASE}?order_by=id&page=3&per_page=10&search=pg-&sort=asc`);
  });

  it('leaves X-Next-Page empty and rel="next" out on the last page', async () => {
    const res = await list('search=pg-&per_page=10&page=3');
    assert.deepEqual(res.json().map((r: { id: number }) => r.id), ids.slice(20));
    assert.equal(res.headers['x-next-page'], '');
    assert.equal(res.headers['x-prev-page'], '2');
    assert.deepEqual([...parseLink(res.headers.link).keys()], ['prev', 'first', 'last']);
  });

  it('has no previous page past the end, as Kaminari', async () => {
    const res = await list('search=pg-&per_page=10&page=9');
    assert.deepEqual(res.json(), []);
    assert.equal(res.headers['x-page'], '9');
    assert.equal(res.headers['x-prev-page'], '');
    assert.equal(res.headers['x-next-page'], '');
    assert.equal(res.headers['x-total'], '25');
    assert.deepEqual([...parseLink(res.headers.link).keys()], ['first', 'last']);
  });

  it('counts an empty list as one page', async () => {
    const res = await list('search=nobody');
    assert.deepEqual(res.json(), []);
    assert.equal(res.headers['x-total'], '0');
    assert.equal(res.headers['x-total-pages'], '1');
    assert.equal(res.headers['x-next-page'], '');
    const q = `${BASE}?order_by=id&page=1&per_page=20&search=nobody&sort=asc`;
    assert.equal(res.headers.link, `<${q}>; rel="first", <${q}>; rel="last"`);
  });

  it('clamps page and per_page as reference §7.1', async () => {
    const zero = await list('per_page=0');
    assert.equal(zero.statusCode, 400);
    assert.deepEqual(zero.json(), { error: 'per_page has a value not allowed' });
    const huge = await list('search=pg-&per_page=1000');
    assert.equal(huge.headers['x-per-page'], '100');
    assert.equal(huge.json().length, 25);
    assert.match(String(huge.headers.link), /per_page=100/);
    const negative = await list('search=pg-&per_page=-5');
    assert.equal(negative.headers['x-per-page'], '20');
    for (const page of ['0', '-3']) {
      const res = await list(`search=pg-&page=${page}`);
      assert.equal(res.statusCode, 200, page);
      assert.equal(res.headers['x-page'], '1', page);
      assert.deepEqual(res.json().map((r: { id: number }) => r.id), ids.slice(0, 20), page);
    }
    for (const [query, error] of [['page=abc', 'page is invalid'], ['page=1.5', 'page is invalid'], ['per_page=x', 'per_page is invalid']]) {
      const res = await list(query);
      assert.equal(res.statusCode, 400, query);
      assert.deepEqual(res.json(), { error }, query);
    }
  });

  it('carries every filter in Link, sorted, with sudo and without credentials', async () => {
    const res = await t.request({
      url: `/api/v4/__people?sort=desc&private_token=${ROOT_TOKEN}&labels[]=b&labels[]=a&items[0][key]=x&items[1][key]=y&search=pg-&sudo=root&per_page=5`,
    });
    assert.equal(res.statusCode, 200);
    const next = parseLink(res.headers.link).get('next')!;
    assert.equal(next, `${BASE}?items%5B0%5D%5Bkey%5D=x&items%5B1%5D%5Bkey%5D=y&labels%5B%5D=b&labels%5B%5D=a&order_by=id&page=2&per_page=5` +
      '&search=pg-&sort=desc&sudo=root');
    const followed = await t.request({ url: injectable(next, t.config.externalUrl), token: ROOT_TOKEN });
    assert.equal(followed.statusCode, 200);
    assert.equal(parseLink(followed.headers.link).get('prev'), next.replace('page=2', 'page=1'), 'the filters survive the round trip');
    assert.ok(!String(res.headers.link).includes(ROOT_TOKEN));
  });

  it('builds Link from KILN_EXTERNAL_URL, not from the Host header', async () => {
    const res = await t.request({ url: '/api/v4/__people?search=pg-', headers: { host: 'evil.example:8080' } });
    for (const url of parseLink(res.headers.link).values()) assert.ok(url.startsWith(`${BASE}?`), url);
  });

  it('follows rel="next" to the end and sees every row exactly once', async () => {
    for (const sort of ['asc', 'desc']) {
      const pages = await followNext(t, `/api/v4/__people?search=pg-&per_page=7&sort=${sort}`, {});
      assert.equal(pages.length, 4);
      const seen = pages.flatMap((p) => p.json().map((r: { id: number }) => r.id));
      assert.deepEqual(seen, sort === 'asc' ? ids : [...ids].reverse());
      assert.deepEqual(pages.map((p) => p.headers['x-page']), ['1', '2', '3', '4']);
    }
  });

  it('pages through the real GET /users the same way', async () => {
    const all = await followNext(t, '/api/v4/users?per_page=4&active=true&search=pg-', { 'private-token': ROOT_TOKEN });
    const seen = all.flatMap((p) => p.json().map((u: { id: number }) => u.id));
    assert.equal(new Set(seen).size, seen.length, 'no user twice');
    assert.deepEqual(seen, [...ids].reverse(), 'newest first, every one');
    const first = all[0];
    assert.equal(first.headers['x-total'], '25');
    assert.equal(first.headers['x-total-pages'], '7');
    const next = parseLink(first.headers.link).get('next')!;
    assert.ok(next.startsWith('http://kiln.test/api/v4/users?'), next);
    assert.match(next, /[?&]active=true(&|$)/);
    assert.match(next, /[?&]page=2&per_page=4(&|$)/);
    assert.match(next, /[?&]search=pg-(&|$)/);
    assert.ok(!next.includes('private_token'));
  });

  describe('keyset', () => {
    it('sends only Link rel="next" with id_after, follows to the end, and omits Link on the last page', async () => {
      const pages = await followNext(t, '/api/v4/__people?pagination=keyset&order_by=id&sort=asc&per_page=5&search=ks-', {});
      assert.equal(pages.length, 3);
      assert.deepEqual(pages.flatMap((p) => p.json().map((r: { id: number }) => r.id)), kids);
      const first = pages[0];
      assert.equal(first.headers.link, `<${BASE}?id_after=${kids[4]}&order_by=id&pagination=keyset&per_page=5&search=ks-&sort=asc>; rel="next"`);
      for (const p of pages) {
        for (const h of ['x-total', 'x-total-pages', 'x-page', 'x-next-page', 'x-prev-page']) assert.equal(p.headers[h], undefined, h);
      }
      assert.equal(pages[2].headers.link, undefined);
    });

    it('walks down with id_before when sorted desc', async () => {
      const pages = await followNext(t, '/api/v4/__people?pagination=keyset&order_by=id&sort=desc&per_page=4&search=ks-', {});
      assert.deepEqual(pages.flatMap((p) => p.json().map((r: { id: number }) => r.id)), [...kids].reverse());
      assert.equal(parseLink(pages[0].headers.link).get('next'),
        `${BASE}?id_before=${kids[8]}&order_by=id&pagination=keyset&per_page=4&search=ks-&sort=desc`);
      // An exactly full last page still links on (spec, Pagination details); the page after it is
      // the empty array without a Link header.
      assert.equal(pages.length, 4);
      assert.notEqual(pages[2].headers.link, undefined);
      assert.deepEqual(pages[3].json(), []);
      assert.equal(pages[3].headers.link, undefined);
    });

    it('answers 405 for an order keyset pagination does not support', async () => {
      const res = await t.request({ url: '/api/v4/__people?pagination=keyset&order_by=name' });
      assert.equal(res.statusCode, 405);
      assert.deepEqual(res.json(), { error: 'Keyset pagination is not yet available for this type of request' });
    });
  });
});

describe('the 10,000 count cap', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({}, { plugins: [people] });
    await insertUsersBulk(t.db, 'cap-', 10_000);
  });
  after(async () => { await t.close(); });

  it('still counts exactly 10,000 rows', async () => {
    const res = await t.request({ url: '/api/v4/__people?search=cap-&per_page=100&page=2' });
    assert.equal(res.headers['x-total'], '10000');
    assert.equal(res.headers['x-total-pages'], '100');
    assert.ok(parseLink(res.headers.link).has('last'));
  });

  it('drops X-Total, X-Total-Pages and rel="last" past 10,000, keeping X-Next-Page right', async () => {
    await insertUsersBulk(t.db, 'cap-', 5, 10_001);
    const second = await t.request({ url: '/api/v4/__people?search=cap-&per_page=100&page=2' });
    assert.equal(second.statusCode, 200);
    assert.equal(second.json().length, 100);
    assert.equal(second.json()[0].username, 'cap-00101');
    assert.equal(second.headers['x-total'], undefined);
    assert.equal(second.headers['x-total-pages'], undefined);
    assert.equal(second.headers['x-next-page'], '3');
    assert.equal(second.headers['x-prev-page'], '1');
    assert.deepEqual([...parseLink(second.headers.link).keys()], ['prev', 'next', 'first']);

    const hundredth = await t.request({ url: '/api/v4/__people?search=cap-&per_page=100&page=100' });
    assert.equal(hundredth.headers['x-next-page'], '101');
    const last = await t.request({ url: '/api/v4/__people?search=cap-&per_page=100&page=101' });
    assert.deepEqual(last.json().map((r: { username: string }) => r.username), ['cap-10001', 'cap-10002', 'cap-10003', 'cap-10004', 'cap-10005']);
    assert.equal(last.headers['x-next-page'], '');
    assert.equal(last.headers['x-prev-page'], '100');
    assert.equal(last.headers['x-total'], undefined);
    assert.deepEqual([...parseLink(last.headers.link).keys()], ['prev', 'first']);
  });

  it('answers the first page of a capped list with the same headers', async () => {
    const res = await t.request({ url: '/api/v4/__people?search=cap-' });
    assert.equal(res.headers['x-page'], '1');
    assert.equal(res.headers['x-next-page'], '2');
    assert.equal(res.headers['x-total'], undefined);
    assert.deepEqual([...parseLink(res.headers.link).keys()], ['next', 'first']);
  });
});
