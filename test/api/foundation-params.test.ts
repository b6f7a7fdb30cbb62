/**
 * Declared parameters (reference §6.3; spec, Endpoints conventions): every P.* type, Grape's
 * rules and texts, and Rails-style arrays and hashes sent in the query, a form, JSON or multipart.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyPluginAsync, InjectOptions } from 'fastify';
import { defineParams, P, type UploadedFile } from '../../src/http/input/params.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const everyType = defineParams({
  name: P.string(),
  count: P.optional(P.integer()),
  ratio: P.optional(P.number()),
  flag: P.optional(P.boolean()),
  day: P.optional(P.date()),
  at: P.optional(P.dateTime()),
  color: P.optional(P.oneOf(['red', 'green'] as const)),
  level: P.optional(P.integer({ exceptValues: [0] })),
  ids: P.optional(P.array(P.integer())),
  tags: P.optional(P.array(P.string(), { commaSeparated: true })),
  scope: P.optional(P.stringOrArray(['running', 'failed'] as const)),
  attrs: P.optional(P.hash()),
  items: P.optional(P.array(P.object({ key: P.string(), value: P.optional(P.integer()) }))),
  avatar: P.optional(P.file()),
  limit: P.optional(P.integer({ default: 7 })),
});

const rules = defineParams({
  a: P.optional(P.string()), b: P.optional(P.string()),
  p: P.optional(P.string()), q: P.optional(P.string()),
  m: P.optional(P.string()), n: P.optional(P.string()),
}, { atLeastOneOf: [['a', 'b']], allOrNoneOf: [['p', 'q']], mutuallyExclusive: [['m', 'n']] });

/** Echoes the validated input; a file comes back as its name, type and size. */
function echo(input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  const file = out.avatar as UploadedFile | undefined;
  if (file) out.avatar = { filename: file.filename, mimetype: file.mimetype, size: file.data.length };
  return out;
}

const probe: FastifyPluginAsync = async (app) => {
  await app.register(async (api) => {
    for (const method of ['GET', 'POST', 'PUT'] as const) {
      api.route({ method, url: '/__params', config: { auth: 'optional', params: everyType }, handler: async (request) => echo(request.input) });
    }
    api.get('/__rules', { config: { auth: 'optional', params: rules } }, async (request) => request.input);
  }, { prefix: '/api/v4' });
};

function multipart(fields: [string, string][], file?: { field: string; filename: string; type: string; content: string }): InjectOptions {
  const boundary = '----kilnboundary7MA4YWxk';
  const parts = fields.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file) {
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\n` +
      `Content-Type: ${file.type}\r\n\r\n${file.content}\r\n`);
  }
  return { payload: `${parts.join('')}--${boundary}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('declared parameters', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({}, { plugins: [probe] }); });
  after(async () => { await t.close(); });

  const get = (url: string) => t.request({ url: `/api/v4/__params?${url}` });

  it('coerces every type and fills defaults', async () => {
    const res = await get('name=n&count=%2042&ratio=1.5&flag=yes&day=2024-02-29&at=2024-01-02T03:04:05Z&color=red&level=3&tags=a,b&scope=running');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), {
      name: 'n', count: 42, ratio: 1.5, flag: true, day: '2024-02-29', at: '2024-01-02T03:04:05.000Z', color: 'red', level: 3,
      tags: ['a', 'b'], scope: ['running'], limit: 7,
    });
  });

  it('reads Grape\'s boolean words and takes an empty non-string value as null', async () => {
    for (const [word, value] of [['true', true], ['t', true], ['1', true], ['on', true], ['false', false], ['f', false], ['0', false], ['no', false]] as const) {
      assert.equal((await get(`name=n&flag=${word}`)).json().flag, value, word);
    }
    assert.deepEqual((await get('name=n&count=&flag=')).json(), { name: 'n', count: null, flag: null, limit: 7 });
  });

  it('answers a missing required attribute with 400 "name" not given', async () => {
    const res = await get('count=1');
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), { message: '400 Bad request - "name" not given' });
    const both = await get('count=x');
    assert.deepEqual(both.json(), { message: '400 Bad request - "name" not given' }, 'a missing attribute is reported before invalid ones');
  });

  it('answers each invalid value with Grape\'s text', async () => {
    const cases: [string, string][] = [
      ['count=abc', 'count is invalid'],
      ['count=1.5', 'count is invalid'],
      ['count=99999999999999999999', 'count is invalid'],
      ['ratio=x', 'ratio is invalid'],
      ['flag=maybe', 'flag is invalid'],
      ['day=2024-02-30', 'day is invalid'],
      ['day=2024-01-01garbage', 'day is invalid'],
      ['at=yesterday', 'at is invalid'],
      ['at=2024-13-01T00:00:00Z', 'at is invalid'],
      ['color=blue', 'color does not have a valid value'],
      ['scope=queued', 'scope does not have a valid value'],
      ['level=0', 'level has a value not allowed'],
      ['ids[]=1&ids[]=x', 'ids is invalid'],
      ['ids=1', 'ids is invalid'],
      ['attrs=flat', 'attrs is invalid'],
      ['items[0][value]=1', 'items is invalid'],
      ['avatar=not-a-file', 'avatar is invalid'],
    ];
    for (const [query, error] of cases) {
      const res = await get(`name=n&${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.deepEqual(res.json(), { error }, query);
    }
  });

  it('joins several errors with ", " in declaration order', async () => {
    const res = await get('name=n&color=blue&count=x&flag=maybe');
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'count is invalid, flag is invalid, color does not have a valid value' });
  });

  it('applies at_least_one_of, all_or_none_of and mutually_exclusive', async () => {
    const call = (q: string) => t.request({ url: `/api/v4/__rules?${q}` });
    assert.deepEqual((await call('')).json(), { error: 'a, b are missing, at least one parameter must be provided' });
    assert.deepEqual((await call('a=1&p=1')).json(), { error: 'p, q provide all or none of parameters' });
    assert.deepEqual((await call('b=1&m=1&n=2')).json(), { error: 'm, n are mutually exclusive' });
    const all = await call('q=1&m=1&n=1');
    assert.equal(all.statusCode, 400);
    assert.deepEqual(all.json(), {
      error: 'a, b are missing, at least one parameter must be provided, p, q provide all or none of parameters, m, n are mutually exclusive',
    });
    const ok = await call('a=1&p=1&q=2&m=1');
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { a: '1', p: '1', q: '2', m: '1' });
  });

  const RAILS = 'name=n&ids[]=1&ids[]=2&attrs[k]=v&attrs[other]=w&items[0][key]=a&items[0][value]=1&items[1][key]=b&scope[]=running&scope[]=failed';
  const PARSED = {
    name: 'n', ids: [1, 2], attrs: { k: 'v', other: 'w' }, items: [{ key: 'a', value: 1 }, { key: 'b' }], scope: ['running', 'failed'], limit: 7,
  };

  it('parses Rails-style arrays, hashes and arrays of hashes in the query', async () => {
    const res = await get(RAILS);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), PARSED);
    const encoded = await get(RAILS.replace(/\[/g, '%5B').replace(/\]/g, '%5D'));
    assert.deepEqual(encoded.json(), PARSED, 'percent-encoded brackets mean the same');
  });

  it('parses the same in a form body', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/__params', payload: RAILS, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), PARSED);
  });

  it('takes the same structure from JSON', async () => {
    const res = await t.request({
      method: 'PUT', url: '/api/v4/__params',
      payload: { name: 'n', ids: [1, '2'], attrs: { k: 'v', other: 'w' }, items: [{ key: 'a', value: '1' }, { key: 'b' }], scope: ['running', 'failed'] },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), PARSED);
  });

  it('parses the same in multipart, with a file', async () => {
    const fields = RAILS.split('&').map((pair) => pair.split('=') as [string, string]);
    const res = await t.request({
      method: 'POST', url: '/api/v4/__params',
      ...multipart(fields, { field: 'avatar', filename: 'me.png', type: 'image/png', content: 'PNGDATA' }),
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ...PARSED, avatar: { filename: 'me.png', mimetype: 'image/png', size: 7 } });
  });

  it('merges query and body, the body winning', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/__params?name=from-query&count=1', payload: { name: 'from-body' } });
    assert.deepEqual(res.json(), { name: 'from-body', count: 1, limit: 7 });
  });

  it('reads %2B in a timestamp as +, and a bare + as a space', async () => {
    const res = await get('name=n&at=2024-01-02T03:04:05%2B02:00');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().at, '2024-01-02T01:04:05.000Z');
    const bare = await get('name=n&at=2024-01-02T03:04:05+02:00');
    assert.equal(bare.statusCode, 400);
    assert.deepEqual(bare.json(), { error: 'at is invalid' });
  });

  it('ignores undeclared parameters', async () => {
    const res = await get('name=n&undeclared=1&nested[x]=2');
    assert.deepEqual(res.json(), { name: 'n', limit: 7 });
  });
});
