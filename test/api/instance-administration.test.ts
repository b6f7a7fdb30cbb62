/**
 * Instance administration (issue 32, item 8): broadcast messages, custom attributes of projects
 * and groups with the list filters, notification settings, feature flags and the background-job
 * metrics, in the Service's shapes and permissions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { notificationRecipients } from '../../src/domain/notification-settings/notification-settings.ts';

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
      const created = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: { message: 'y' } });
      const emptied = await t.request({ method: 'PUT', url: `/api/v4/broadcast_messages/${created.json().id}`, token: ROOT_TOKEN, payload: { ends_at: '' } });
      assert.equal(emptied.statusCode, 400);
      assert.deepEqual(emptied.json(), { message: { ends_at: ["can't be blank"] } });
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

  describe('notification settings', () => {
    it('global: participating by default, the primary email, levels and custom events', async () => {
      const u = await createUser(t.db);
      const token = await createToken(t.db, u, { scopes: ['api'] });
      const first = await t.request({ method: 'GET', url: '/api/v4/notification_settings', token });
      assert.equal(first.statusCode, 200);
      assert.deepEqual(first.json(), { level: 'participating', notification_email: u.email });
      assert.equal((await t.db.selectFrom('notification_settings').selectAll().where('user_id', '=', u.id).execute()).length, 0);

      const watch = await t.request({ method: 'PUT', url: '/api/v4/notification_settings', token, payload: { level: 'watch' } });
      assert.equal(watch.statusCode, 200, watch.body);
      assert.deepEqual(watch.json(), { level: 'watch', notification_email: u.email });
      assert.equal((await t.request({ method: 'GET', url: '/api/v4/notification_settings', token })).json().level, 'watch');

      const custom = await t.request({ method: 'PUT', url: '/api/v4/notification_settings', token, payload: { level: 'custom', new_note: true } });
      const events = custom.json().events;
      assert.equal(events.new_note, true);
      assert.equal(events.new_issue, false);
      assert.equal(events.failed_pipeline, true);
      assert.equal(Object.keys(events).length, 19);

      const bad = await t.request({ method: 'PUT', url: '/api/v4/notification_settings', token, payload: { level: 'loud' } });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json(), { message: "'loud' is not a valid level" });
      const email = await t.request({ method: 'PUT', url: '/api/v4/notification_settings', token, payload: { notification_email: 'not-mine@example.com' } });
      assert.equal(email.statusCode, 400);
      assert.deepEqual(email.json(), { message: { notification_email: ['is not an email you own'] } });
      assert.equal((await t.request({ method: 'GET', url: '/api/v4/notification_settings' })).statusCode, 401);
    });

    it('per project and group: global by default, 404 for sources the caller cannot read', async () => {
      for (const [kind, id] of [['projects', projectId], ['groups', groupId]] as const) {
        const url = `/api/v4/${kind}/${id}/notification_settings`;
        assert.deepEqual((await t.request({ method: 'GET', url, token: ROOT_TOKEN })).json(), { level: 'global' });
        const set = await t.request({ method: 'PUT', url, token: ROOT_TOKEN, payload: { level: 'mention' } });
        assert.deepEqual(set.json(), { level: 'mention' });
        assert.deepEqual((await t.request({ method: 'GET', url, token: ROOT_TOKEN })).json(), { level: 'mention' });
        const hidden = await t.request({ method: 'GET', url, token: userToken });
        assert.equal(hidden.statusCode, 404);
      }
    });

    it('notificationRecipients follows project, group and global levels', async () => {
      const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'notify', path: 'notify' } });
      const gid = group.json().id;
      const project = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'notified', namespace_id: gid } });
      const pid = project.json().id;
      const people = await Promise.all([1, 2, 3, 4, 5].map(() => createUser(t.db)));
      const tokens = await Promise.all(people.map((p) => createToken(t.db, p, { scopes: ['api'] })));
      for (const p of people) {
        const m = await t.request({ method: 'POST', url: `/api/v4/projects/${pid}/members`, token: ROOT_TOKEN, payload: { user_id: p.id, access_level: 30 } });
        assert.equal(m.statusCode, 201, m.body);
      }
      const [watcher, groupWatcher, participant, disabled, customOn] = people;
      const put = (i: number, url: string, payload: Record<string, unknown>) => t.request({ method: 'PUT', url, token: tokens[i], payload });
      await put(0, `/api/v4/projects/${pid}/notification_settings`, { level: 'watch' });
      await put(1, '/api/v4/notification_settings', { level: 'watch' });
      await put(3, '/api/v4/notification_settings', { level: 'disabled' });
      await put(4, `/api/v4/projects/${pid}/notification_settings`, { level: 'custom', new_issue: true });
      const lineage = [gid];
      const newIssue = await notificationRecipients(t.db, {
        event: 'new_issue', projectId: pid, groupIds: lineage, participants: [participant.id, disabled.id],
      });
      assert.deepEqual(newIssue, [watcher.id, groupWatcher.id, participant.id, customOn.id].sort((a, b) => a - b));
      // Watchers are not sent success_pipeline; custom without the event only as participants.
      const success = await notificationRecipients(t.db, { event: 'success_pipeline', projectId: pid, groupIds: lineage, participants: [participant.id] });
      assert.deepEqual(success, [participant.id]);
      const mentioned = await notificationRecipients(t.db, {
        event: 'new_note', projectId: pid, groupIds: lineage, mentioned: [disabled.id], exclude: [watcher.id],
      });
      assert.deepEqual(mentioned, [groupWatcher.id]);
    });
  });

  describe('job metrics (sidekiq)', () => {
    it('reads the queue, the worker processes and the totals, administrators only', async () => {
      t.app.jobs.registerHandler('metrics-test-ok', async () => {});
      t.app.jobs.registerHandler('metrics-test-fail', async () => { throw new Error('no'); }, { maxAttempts: 1 });
      const before = (await t.request({ method: 'GET', url: '/api/v4/sidekiq/job_stats', token: ROOT_TOKEN })).json().jobs;
      await t.app.jobs.enqueue('metrics-test-ok', {});
      await t.app.jobs.enqueue('metrics-test-fail', {});
      await t.app.jobs.enqueue('metrics-test-later', {}, { runAt: new Date(Date.now() + 3_600_000) });
      let jobs = before;
      for (let i = 0; i < 100 && (jobs.processed < before.processed + 2 || jobs.dead < before.dead + 1); i += 1) {
        await new Promise((r) => setTimeout(r, 50));
        jobs = (await t.request({ method: 'GET', url: '/api/v4/sidekiq/job_stats', token: ROOT_TOKEN })).json().jobs;
      }
      assert.equal(jobs.processed, before.processed + 2);
      assert.equal(jobs.failed, before.failed + 1);
      assert.equal(jobs.dead, before.dead + 1);
      assert.equal(jobs.enqueued, before.enqueued + 1);

      const queues = await t.request({ method: 'GET', url: '/api/v4/sidekiq/queue_metrics', token: ROOT_TOKEN });
      assert.equal(queues.statusCode, 200);
      assert.deepEqual(queues.json(), { queues: { default: { backlog: 0, latency: 0 } } });

      const processes = (await t.request({ method: 'GET', url: '/api/v4/sidekiq/process_metrics', token: ROOT_TOKEN })).json().processes;
      assert.equal(processes.length, 1);
      assert.equal(processes[0].pid, process.pid);
      assert.deepEqual(Object.keys(processes[0]), ['hostname', 'pid', 'tag', 'started_at', 'queues', 'labels', 'concurrency', 'busy']);

      const compound = (await t.request({ method: 'GET', url: '/api/v4/sidekiq/compound_metrics', token: ROOT_TOKEN })).json();
      assert.deepEqual(Object.keys(compound), ['queues', 'processes', 'jobs']);
      for (const path of ['queue_metrics', 'process_metrics', 'job_stats', 'compound_metrics']) {
        assert.equal((await t.request({ method: 'GET', url: `/api/v4/sidekiq/${path}`, token: userToken })).statusCode, 403);
      }
      await t.db.deleteFrom('background_jobs').where('kind', 'like', 'metrics-test-%').execute();
    });
  });

  describe('feature flags', () => {
    it('sets, lists and unsets gates; the definitions are the flags kiln reads', async () => {
      const defs = await t.request({ method: 'GET', url: '/api/v4/features/definitions', token: ROOT_TOKEN });
      assert.equal(defs.statusCode, 200);
      assert.deepEqual(defs.json().map((d: { name: string }) => d.name), [
        'project_daily_fetch_statistics', 'project_statistics_refresh', 'import_project_from_remote_file',
        'import_project_from_remote_file_s3', 'web_hooks_disable_failed',
        'ci_disallow_to_create_merge_request_pipelines_in_target_project', 'role_targeted_broadcast_messages',
      ]);

      const pct = await t.request({ method: 'POST', url: '/api/v4/features/foo', token: ROOT_TOKEN, payload: { value: '30' } });
      assert.equal(pct.statusCode, 201, pct.body);
      assert.deepEqual(pct.json(), { name: 'foo', state: 'conditional', gates: [{ key: 'percentage_of_time', value: 30 }], definition: null });
      const list = await t.request({ method: 'GET', url: '/api/v4/features', token: ROOT_TOKEN });
      assert.deepEqual(list.json().map((f: { name: string }) => f.name), ['foo']);
      // Repeated slashes are squeezed before routing, as the Service's router does (python-gitlab
      // 3.12 sets flags at /api/v4/features//<name>).
      const doubled = await t.request({ method: 'POST', url: '/api/v4/features//foo', token: ROOT_TOKEN, payload: { value: '30' } });
      assert.equal(doubled.statusCode, 201, doubled.body);
      assert.equal(doubled.json().name, 'foo');

      const actors = await t.request({
        method: 'POST', url: '/api/v4/features/project_daily_fetch_statistics', token: ROOT_TOKEN,
        payload: { value: 'true', project: 'root/attrs-project' },
      });
      assert.equal(actors.statusCode, 201, actors.body);
      assert.deepEqual(actors.json().gates, [{ key: 'actors', value: [`Project:${projectId}`] }]);
      assert.equal(actors.json().definition.name, 'project_daily_fetch_statistics');
      const missing = await t.request({ method: 'POST', url: '/api/v4/features/foo', token: ROOT_TOKEN, payload: { value: 'true', user: 'nobody-here' } });
      assert.equal(missing.statusCode, 400);
      assert.deepEqual(missing.json(), { message: 'nobody-here is not found!' });
      const tooMuch = await t.request({ method: 'POST', url: '/api/v4/features/foo', token: ROOT_TOKEN, payload: { value: '101' } });
      assert.equal(tooMuch.statusCode, 400);
      const exclusive = await t.request({
        method: 'POST', url: '/api/v4/features/foo', token: ROOT_TOKEN, payload: { value: '10', key: 'percentage_of_actors', user: 'root' },
      });
      assert.equal(exclusive.statusCode, 400);

      const off = await t.request({ method: 'POST', url: '/api/v4/features/foo', token: ROOT_TOKEN, payload: { value: 'false' } });
      assert.deepEqual(off.json(), { name: 'foo', state: 'off', gates: [], definition: null });
      assert.equal((await t.request({ method: 'DELETE', url: '/api/v4/features/foo', token: ROOT_TOKEN })).statusCode, 204);
      assert.deepEqual((await t.request({ method: 'GET', url: '/api/v4/features', token: ROOT_TOKEN })).json().map((f: { name: string }) => f.name),
        ['project_daily_fetch_statistics']);
      assert.equal((await t.request({ method: 'GET', url: '/api/v4/features', token: userToken })).statusCode, 403);
      await t.request({ method: 'DELETE', url: '/api/v4/features/project_daily_fetch_statistics', token: ROOT_TOKEN });
    });

    it('gates what kiln does: a project whose fetch counting is off is not counted', async () => {
      const { featureEnabled } = await import('../../src/domain/features/features.ts');
      const { recordProjectFetch } = await import('../../src/domain/statistics/project-statistics.ts');
      assert.equal(await featureEnabled(t.db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId }), true);
      const off = await t.request({
        method: 'POST', url: '/api/v4/features/project_daily_fetch_statistics', token: ROOT_TOKEN, payload: { value: 'false' },
      });
      assert.equal(off.statusCode, 201);
      assert.equal(await featureEnabled(t.db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId }), false);
      await recordProjectFetch(t.db, projectId);
      assert.equal((await t.db.selectFrom('project_daily_statistics').selectAll().where('project_id', '=', projectId).execute()).length, 0);
      // On for this project only.
      await t.request({
        method: 'POST', url: '/api/v4/features/project_daily_fetch_statistics', token: ROOT_TOKEN,
        payload: { value: 'true', project: String(projectId) },
      });
      assert.equal(await featureEnabled(t.db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId }), true);
      assert.equal(await featureEnabled(t.db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId + 1000 }), false);
      await recordProjectFetch(t.db, projectId);
      assert.equal((await t.db.selectFrom('project_daily_statistics').selectAll().where('project_id', '=', projectId).execute()).length, 1);
      await t.request({ method: 'DELETE', url: '/api/v4/features/project_daily_fetch_statistics', token: ROOT_TOKEN });
      assert.equal(await featureEnabled(t.db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId + 1000 }), true);
    });
  });
});
