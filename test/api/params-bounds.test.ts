/**
 * The parameter layer's bounds (issue 13), on both engines: NUL and text no column can hold,
 * integers beyond their column, strings beyond their limit, days that do not exist, and project
 * paths that name a directory's parent. Each is a 4xx in the Service's shape, never a 500.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { defineParams, P, validateParams } from '../../src/http/input/params.ts';

describe('parameter bounds', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp();
    token = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const get = (url: string, as = ROOT_TOKEN) => t.request({ url, token: as });
  const send = (method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>, as = ROOT_TOKEN) => t.request({ method, url, token: as, payload });

  it('answers NUL in a path segment with the route\'s 404 and in a parameter with 400 "<param> is invalid"', async () => {
    for (const [url, message] of [
      ['/api/v4/users/%00/status', '404 User Not Found'], ['/api/v4/groups/%00', '404 Group Not Found'],
      ['/api/v4/projects/a%00b', '404 Project Not Found'], ['/api/v4/users/a%00/keys', '404 User Not Found'],
    ]) {
      const res = await get(url);
      assert.deepEqual([res.statusCode, res.json()], [404, { message }], url);
    }
    for (const [query, error] of [['username=a%00b', 'username is invalid'], ['search=%00', 'search is invalid'], ['extern_uid=%00&provider=x', 'extern_uid is invalid']]) {
      const res = await get(`/api/v4/users?${query}`);
      assert.deepEqual([res.statusCode, res.json()], [400, { error }], query);
    }
    const body = await send('POST', '/api/v4/user/emails', { email: 'a\u0000@example.org' }, token);
    assert.deepEqual([body.statusCode, body.json()], [400, { error: 'email is invalid' }]);
    const surrogate = await send('POST', '/api/v4/user/emails', { email: 'a\ud800@example.org' }, token);
    assert.deepEqual([surrogate.statusCode, surrogate.json()], [400, { error: 'email is invalid' }]);
    // sudo is nobody's declared parameter: the Service's null-byte middleware answers 400.
    const sudo = await get('/api/v4/user?sudo=a%00b');
    assert.equal(sudo.statusCode, 400);
    const sudoHeader = await t.request({ url: '/api/v4/user', token: ROOT_TOKEN, headers: { sudo: 'x'.repeat(300) } });
    assert.equal(sudoHeader.statusCode, 404);
  });

  it('answers ids beyond the column with the route\'s 404 in a path, 400 in a body, its bound in a query filter', async () => {
    for (const [url, message] of [
      ['/api/v4/users/2147483648', '404 User Not Found'], ['/api/v4/users/9223372036854775808', '404 User Not Found'],
      ['/api/v4/snippets/2147483648', '404 Snippet Not Found'], ['/api/v4/users/99999999999999999999/keys', '404 User Not Found'],
    ]) {
      const res = await get(url);
      assert.deepEqual([res.statusCode, res.json()], [404, { message }], url);
    }
    // A query filter beyond the column compares as its bound: nothing is after 2^31, everything before it.
    const after = await get('/api/v4/projects?pagination=keyset&order_by=id&sort=asc&id_after=2147483648');
    assert.deepEqual([after.statusCode, after.json()], [200, []]);
    const before = await get('/api/v4/projects?pagination=keyset&order_by=id&sort=desc&id_before=1099511627776');
    assert.equal(before.statusCode, 200);
    const body = await send('POST', '/api/v4/projects', { name: 'big', namespace_id: 2 ** 31 });
    assert.deepEqual([body.statusCode, body.json()], [400, { error: 'namespace_id is invalid' }]);
    const fraction = await send('POST', '/api/v4/projects', { name: 'big', namespace_id: 1.5 });
    assert.deepEqual([fraction.statusCode, fraction.json()], [400, { error: 'namespace_id is invalid' }]);
    const listed = await get('/api/v4/groups?skip_groups[]=1&skip_groups[]=2147483648');
    assert.equal(listed.statusCode, 200);
  });

  it('bounds names and paths (255) before any directory is made, with the Service\'s length message', async () => {
    const long = 'a'.repeat(256);
    for (const [url, payload, field] of [
      ['/api/v4/projects', { name: long }, 'name'], ['/api/v4/projects', { path: long }, 'path'],
      ['/api/v4/groups', { name: 'g', path: long }, 'path'], ['/api/v4/groups', { name: 'g', path: 'b'.repeat(1024 * 1024) }, 'path'],
    ] as const) {
      const res = await send('POST', url, payload);
      assert.deepEqual([res.statusCode, res.json()], [400, { message: { [field]: ['is too long (maximum is 255 characters)'] } }], `${url} ${field}`);
    }
    // 255 characters is a valid path, though `<path>.git` is longer than a file name may be.
    const max = 'p'.repeat(255);
    const project = await send('POST', '/api/v4/projects', { path: max });
    assert.equal(project.statusCode, 201, project.body);
    assert.equal(project.json().path, max);
    const group = await send('POST', '/api/v4/groups', { name: 'Long', path: 'g'.repeat(255) });
    assert.equal(group.statusCode, 201, group.body);
  });

  it('refuses project paths `.`, `..` and those ending in .git or .atom with the path format message', async () => {
    for (const path of ['.', '..', 'x.git', 'x.atom']) {
      const res = await send('POST', '/api/v4/projects', { name: `p ${path.length}`, path });
      assert.equal(res.statusCode, 400, path);
      assert.deepEqual(res.json().message.path, ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"]);
    }
  });

  it('answers a day that does not exist with 400 "<param> is invalid"', async () => {
    for (const [url, error] of [
      ['/api/v4/users?created_after=2024-02-30', 'created_after is invalid'], ['/api/v4/users?created_before=2023-02-29T10:00:00Z', 'created_before is invalid'],
      ['/api/v4/user/activities?from=2024-13-01', 'from is invalid'], ['/api/v4/projects?last_activity_after=2024-04-31', 'last_activity_after is invalid'],
      ['/api/v4/projects?last_activity_before=2024-01-01T24:30:00Z', 'last_activity_before is invalid'],
    ]) {
      const res = await get(url);
      assert.deepEqual([res.statusCode, res.json()], [400, { error }], url);
    }
    assert.equal((await get('/api/v4/users?created_after=2024-02-29')).statusCode, 200);
  });
});

describe('refs are checked as git checks them before git runs', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers a pipeline ref with NUL, 1 MB or a form git refuses with 400, and a bad default branch too', async () => {
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'refcheck' } });
    const id = project.json().id;
    const nul = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/pipeline`, token: ROOT_TOKEN, payload: { ref: 'ma\u0000in' } });
    assert.deepEqual([nul.statusCode, nul.json()], [400, { error: 'ref is invalid' }]);
    const huge = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/pipeline`, token: ROOT_TOKEN, payload: { ref: 'r'.repeat(1024 * 1024) } });
    assert.deepEqual([huge.statusCode, huge.json()], [400, { message: { ref: ['is too long (maximum is 255 characters)'] } }]);
    for (const ref of ['a..b', '-x', 'x.lock', 'a/.b', 'x@{1}', 'x^', 'a b', '@', 'a//b', 'x.', '/x']) {
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/pipeline`, token: ROOT_TOKEN, payload: { ref } });
      assert.deepEqual([res.statusCode, res.json()], [400, { message: { base: ['Reference not found'] } }], ref);
    }
    for (const branch of ['-x', 'a..b', 'x.lock']) {
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: `b${branch.length}x`, default_branch: branch, initialize_with_readme: true } });
      assert.equal(res.statusCode, 400, branch);
      assert.deepEqual(res.json().message.default_branch, ['is invalid']);
    }
  });
});

describe('NUL outside /api/v4', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('refuses NUL in a path or parameter of the pages, OAuth and git with 400, as the Service\'s null-byte middleware does', async () => {
    for (const [method, url, payload] of [
      ['GET', '/oauth/authorize?client_id=a%00b&response_type=code', undefined],
      ['POST', '/oauth/token', 'grant_type=password&username=ro%00ot&password=x'],
      ['GET', '/users/sign_in?return_to=%2Fa%00', undefined],
      ['GET', '/ro%00ot/x.git/info/refs?service=git-upload-pack', undefined],
    ] as const) {
      const res = await t.request({ method, url, ...(payload ? { payload, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request' }], url);
    }
  });
});

describe('integers that are never stored', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('clamps per_page beyond 2^31 to 100 as the Service does, and answers a page beyond it empty', async () => {
    const res = await t.request({ url: '/api/v4/users?per_page=2147483648', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-per-page'], '100');
    const page = await t.request({ url: '/api/v4/users?page=2147483648', token: ROOT_TOKEN });
    assert.deepEqual([page.statusCode, page.json()], [200, []]);
  });
});

describe('a parameter whose route answers in its own words', () => {
  it('passes NUL and length through with ownErrors, and refuses them without', () => {
    const own = defineParams({ branch: P.string({ ownErrors: true }), filter: P.optional(P.hash({ ownErrors: true })) });
    assert.deepEqual(validateParams(own, { branch: 'a\u0000b', filter: { 'k\u0000': 'v\u0000' } }), { branch: 'a\u0000b', filter: { 'k\u0000': 'v\u0000' } });
    const plain = defineParams({ branch: P.name() });
    assert.throws(() => validateParams(plain, { branch: 'a\u0000b' }), (err: { body?: unknown }) => JSON.stringify(err.body) === '{"error":"branch is invalid"}');
    assert.throws(() => validateParams(plain, { branch: 'b'.repeat(256) }), (err: { body?: unknown }) => JSON.stringify(err.body) === '{"message":{"branch":["is too long (maximum is 255 characters)"]}}');
  });
});

describe('commit authors git would refuse', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers an author that is only what git strips, and empty actions, with 400 before git runs', async () => {
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'authors', initialize_with_readme: true } });
    const id = project.json().id;
    for (const author_name of ['.', '..', ' <> ', '";\'']) {
      const res = await t.request({
        method: 'PUT', url: `/api/v4/projects/${id}/repository/files/README.md`, token: ROOT_TOKEN,
        payload: { branch: 'main', content: 'x', commit_message: 'm', author_name, author_email: 'a@example.org' },
      });
      assert.deepEqual([res.statusCode, res.json()], [400, { error: 'author_name is invalid' }], author_name);
    }
    const ok = await t.request({
      method: 'PUT', url: `/api/v4/projects/${id}/repository/files/README.md`, token: ROOT_TOKEN,
      payload: { branch: 'main', content: 'x', commit_message: 'm', author_name: 'A. N. Other', author_email: 'a@example.org' },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const empty = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/repository/commits`, token: ROOT_TOKEN, payload: { branch: 'main', commit_message: 'm', actions: '' } });
    assert.deepEqual([empty.statusCode, empty.json()], [400, { error: 'actions is invalid' }]);
  });
});
