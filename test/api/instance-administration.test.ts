/**
 * Instance administration (issue 32, item 8): broadcast messages, custom attributes of projects
 * and groups with the list filters, notification settings, feature flags and the background-job
 * metrics, in the Service's shapes and permissions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('instance administration', () => {
  let t: TestApp;
  let userToken: string;
  let projectId: number;
  let groupId: number;

  before(async () => {
    t = await startTestApp();
    const user = await createUser(t.db);
    userToken = await createToken(t.db, user, { scopes: ['api'] });
    const p = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'attrs-project' } });
    assert.equal(p.statusCode, 201, p.body);
    projectId = p.json().id;
    const g = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'attrs-group', path: 'attrs-group' } });
    assert.equal(g.statusCode, 201, g.body);
    groupId = g.json().id;
  });
  after(async () => t?.close());

  describe('broadcast messages', () => {
    it('creates with defaults, updates, lists newest first, reads publicly and deletes', async () => {
      const created = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: { message: 'maintenance tonight' } });
      assert.equal(created.statusCode, 201, created.body);
      const m = created.json();
      assert.deepEqual(Object.keys(m), [
        'id', 'message', 'starts_at', 'ends_at', 'color', 'font', 'target_access_levels', 'target_path', 'broadcast_type', 'dismissable', 'active',
      ]);
      assert.equal(m.color, '#E75E40');
      assert.equal(m.font, '#FFFFFF');
      assert.equal(m.broadcast_type, 'banner');
      assert.equal(m.active, true);
      assert.equal(m.dismissable, null);
      assert.equal(Date.parse(m.ends_at) - Date.parse(m.starts_at), 3_600_000);

      const updated = await t.request({
        method: 'PUT', url: `/api/v4/broadcast_messages/${m.id}`, token: ROOT_TOKEN,
        payload: { color: '#444444', broadcast_type: 'notification', dismissable: true, target_access_levels: '10,30' },
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(updated.json().color, '#444444');
      assert.equal(updated.json().broadcast_type, 'notification');
      assert.equal(updated.json().dismissable, true);
      assert.deepEqual(updated.json().target_access_levels, [10, 30]);

      const future = await t.request({
        method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN,
        payload: { message: 'later', starts_at: '2999-01-01T00:00:00Z', ends_at: '2999-01-02T00:00:00Z' },
      });
      assert.equal(future.json().active, false);

      const list = await t.request({ method: 'GET', url: '/api/v4/broadcast_messages' });
      assert.equal(list.statusCode, 200);
      assert.deepEqual(list.json().map((x: { id: number }) => x.id), [future.json().id, m.id]);
      const one = await t.request({ method: 'GET', url: `/api/v4/broadcast_messages/${m.id}` });
      assert.equal(one.json().color, '#444444');

      const del = await t.request({ method: 'DELETE', url: `/api/v4/broadcast_messages/${m.id}`, token: ROOT_TOKEN });
      assert.equal(del.statusCode, 204);
      const gone = await t.request({ method: 'GET', url: `/api/v4/broadcast_messages/${m.id}` });
      assert.equal(gone.statusCode, 404);
      assert.deepEqual(gone.json(), { message: '404 Not found' });
    });

    it('refuses bad colours, unknown access levels and non-administrators', async () => {
      const bad = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: { message: 'x', color: 'red' } });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json(), { message: { color: ['must be a valid color code'] } });
      const levels = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: { message: 'x', target_access_levels: [15] } });
      assert.equal(levels.statusCode, 400);
      assert.deepEqual(levels.json(), { error: 'target_access_levels does not have a valid value' });
      const missing = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: {} });
      assert.equal(missing.statusCode, 400);
      const user = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: userToken, payload: { message: 'x' } });
      assert.equal(user.statusCode, 403);
      const anonymous = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', payload: { message: 'x' } });
      assert.equal(anonymous.statusCode, 401);
    });
  });

  describe('custom attributes of projects and groups', () => {
    for (const kind of ['projects', 'groups'] as const) {
      it(`${kind}: set, replace, read, filter the list, delete; administrators only`, async () => {
        const id = kind === 'projects' ? projectId : groupId;
        const base = `/api/v4/${kind}/${id}/custom_attributes`;
        assert.deepEqual((await t.request({ method: 'GET', url: base, token: ROOT_TOKEN })).json(), []);
        const set = await t.request({ method: 'PUT', url: `${base}/key`, token: ROOT_TOKEN, payload: { value: 'value1' } });
        assert.equal(set.statusCode, 200, set.body);
        assert.deepEqual(set.json(), { key: 'key', value: 'value1' });

        const filtered = await t.request({ method: 'GET', url: `/api/v4/${kind}?custom_attributes[key]=value1`, token: ROOT_TOKEN });
        assert.deepEqual(filtered.json().map((x: { id: number }) => x.id), [id]);
        const none = await t.request({ method: 'GET', url: `/api/v4/${kind}?custom_attributes[key]=other`, token: ROOT_TOKEN });
        assert.deepEqual(none.json(), []);

        await t.request({ method: 'PUT', url: `${base}/key`, token: ROOT_TOKEN, payload: { value: 'value2' } });
        const got = await t.request({ method: 'GET', url: `${base}/key`, token: ROOT_TOKEN });
        assert.deepEqual(got.json(), { key: 'key', value: 'value2' });
        assert.deepEqual((await t.request({ method: 'GET', url: base, token: ROOT_TOKEN })).json(), [{ key: 'key', value: 'value2' }]);

        const forbidden = await t.request({ method: 'PUT', url: `${base}/key`, token: userToken, payload: { value: 'x' } });
        assert.equal(forbidden.statusCode, 403);
        const blank = await t.request({ method: 'PUT', url: `${base}/key`, token: ROOT_TOKEN, payload: { value: ' ' } });
        assert.equal(blank.statusCode, 400);

        assert.equal((await t.request({ method: 'DELETE', url: `${base}/key`, token: ROOT_TOKEN })).statusCode, 204);
        const again = await t.request({ method: 'DELETE', url: `${base}/key`, token: ROOT_TOKEN });
        assert.equal(again.statusCode, 404);
        assert.deepEqual((await t.request({ method: 'GET', url: base, token: ROOT_TOKEN })).json(), []);
        const table = kind === 'projects' ? 'project_custom_attributes' : 'group_custom_attributes';
        const rows = await t.db.selectFrom(table).selectAll().execute();
        assert.equal(rows.length, 0);
      });
    }
  });
});
