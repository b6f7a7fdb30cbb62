import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('user preferences', () => {
  let t: TestApp;
  let user: UserRow;
  let token: string;

  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    token = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const rows = () => t.db.selectFrom('user_preferences').selectAll().where('user_id', '=', user.id).execute();

  it('requires authentication', async () => {
    const res = await t.request({ url: '/api/v4/user/preferences' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    assert.equal((await t.request({ method: 'PUT', url: '/api/v4/user/preferences', payload: { view_diffs_file_by_file: true, show_whitespace_in_diffs: true } })).statusCode, 401);
  });

  it('creates the defaults on first read, once', async () => {
    const res = await t.request({ url: '/api/v4/user/preferences', token });
    assert.equal(res.statusCode, 200);
    const [row] = await rows();
    assert.deepEqual(res.json(), { id: row.id, user_id: user.id, view_diffs_file_by_file: false, show_whitespace_in_diffs: true });
    await t.request({ url: '/api/v4/user/preferences', token });
    assert.equal((await rows()).length, 1);
  });

  it('accepts read_user tokens for reading only', async () => {
    const readOnly = await createToken(t.db, user, { scopes: ['read_user'] });
    assert.equal((await t.request({ url: '/api/v4/user/preferences', token: readOnly })).statusCode, 200);
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token: readOnly, payload: { view_diffs_file_by_file: true, show_whitespace_in_diffs: true } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'insufficient_scope');
  });

  it('sets both flags', async () => {
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: { view_diffs_file_by_file: true, show_whitespace_in_diffs: true } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().view_diffs_file_by_file, true);
    assert.equal(res.json().show_whitespace_in_diffs, true);
    const second = await t.request({ method: 'PUT', url: '/api/v4/user/preferences?show_whitespace_in_diffs=false&view_diffs_file_by_file=true', token });
    assert.deepEqual({ ...(second.json() as object), id: 0 }, { id: 0, user_id: user.id, view_diffs_file_by_file: true, show_whitespace_in_diffs: false });
    const [row] = await rows();
    assert.equal(row.view_diffs_file_by_file, 1);
    assert.equal(row.show_whitespace_in_diffs, 0);
  });

  it('creates the row on a first write too', async () => {
    const other = await createUser(t.db);
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token: await createToken(t.db, other), payload: { show_whitespace_in_diffs: false, view_diffs_file_by_file: false } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual({ ...(res.json() as object), id: 0 }, { id: 0, user_id: other.id, view_diffs_file_by_file: false, show_whitespace_in_diffs: false });
  });

  it('requires both flags (the spec table), and valid booleans', async () => {
    const none = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: {} });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { message: '400 Bad request - "view_diffs_file_by_file" not given' });
    const one = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: { view_diffs_file_by_file: true } });
    assert.equal(one.statusCode, 400);
    assert.deepEqual(one.json(), { message: '400 Bad request - "show_whitespace_in_diffs" not given' });
    const nulled = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: { view_diffs_file_by_file: true, show_whitespace_in_diffs: null } });
    assert.equal(nulled.statusCode, 400);
    assert.deepEqual(nulled.json(), { message: '400 Bad request - "show_whitespace_in_diffs" not given' });
    const bad = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: { view_diffs_file_by_file: 'maybe', show_whitespace_in_diffs: true } });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'view_diffs_file_by_file is invalid' });
    const empty = await t.request({ method: 'PUT', url: '/api/v4/user/preferences', token, payload: { view_diffs_file_by_file: '', show_whitespace_in_diffs: true } });
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(empty.json(), { message: '400 Bad Request' });
  });
});
