/**
 * Webhook delivery logs and auto-disabling (issue 31, item 4): every delivery attempt, queued or
 * a test, is recorded in web_hook_logs with its trigger, the URL with credentials masked, the
 * request headers with the secret token redacted, the data, the answer's headers, body (cut at
 * 8 KiB) and status, the execution time and the error of a request that got no answer; logs past
 * 90 days are pruned. A hook's failure state follows its answers (500 and no answer back it off,
 * other failures count up, a success clears it); behind the default-off web_hooks_disable_failed
 * flag a disabled hook is skipped and the entity's alert_status says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { freePort } from '../helpers/listen.ts';
import { pruneWebHookLogs } from '../../src/domain/web-hooks/web-hook-logs.ts';

describe('webhook logs and auto-disabling', () => {
  let t: TestApp;
  let p: CiProject;
  let server: http.Server;
  let port: number;
  /** The statuses the receiver answers with next on each path (then 200). */
  const answers = new Map<string, number[]>();
  const answer = (path: string, ...statuses: number[]) => answers.set(path, [...(answers.get(path) ?? []), ...statuses]);
  const hits = new Map<string, number>();

  const logsOf = (hookId: number) => t.db.selectFrom('web_hook_logs').selectAll().where('web_hook_id', '=', hookId).orderBy('id').execute();
  const hookRow = (id: number) => t.db.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  async function waitFor(pred: () => Promise<boolean>, what: string): Promise<void> {
    const end = Date.now() + 20_000;
    while (!(await pred())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const testDelivery = (hookId: number) => t.request({
    method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks/${hookId}/test/push_events`, token: p.ownerToken,
  });
  const getHook = async (hookId: number) => (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/hooks/${hookId}`, token: p.ownerToken })).json();
  const setFlag = async (on: boolean) => {
    const res = await t.request({ method: 'POST', url: '/api/v4/features/web_hooks_disable_failed', token: ROOT_TOKEN, payload: { value: String(on) } });
    assert.equal(res.statusCode, 201, res.body);
  };
  const openIssue = (title: string) => t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/issues`, token: p.ownerToken, payload: { title } });

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '';
        hits.set(path, (hits.get(path) ?? 0) + 1);
        const status = answers.get(path)?.shift() ?? 200;
        res.setHeader('X-Receiver', 'kiln-test');
        res.writeHead(status, { 'content-type': 'text/plain' }).end(req.url?.startsWith('/big') ? 'é'.repeat(6000) : `answered ${status}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    t = await startTestApp({ KILN_JOB_POLL_MS: '50' });
    p = await createCiProject(t);
    await pushFiles(t, p, { 'README.md': 'hi\n' }, { message: 'First' });
    const res = await t.request({
      method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: true },
    });
    assert.equal(res.statusCode, 200);
  });

  after(async () => {
    await t.close();
    server.close();
  });

  async function addHook(path: string, extra: Record<string, unknown> = {}) {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken,
      payload: { url: `http://bob:hunter2@127.0.0.1:${port}${path}`, token: 'very-secret-token', push_events: false, issues_events: true, ...extra },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  it('records a delivery with masked credentials, the token redacted and the answer bounded', async () => {
    const hook = await addHook('/big');
    assert.equal(hook.alert_status, 'executable');
    assert.equal(hook.disabled_until, null);
    const res = await testDelivery(hook.id);
    assert.equal(res.statusCode, 201, res.body);
    const [log] = await logsOf(hook.id);
    assert.ok(log, 'a log row');
    assert.equal(log.trigger, 'push_hooks');
    assert.equal(log.url, `http://*****:*****@127.0.0.1:${port}/big`);
    const headers = JSON.parse(log.request_headers);
    assert.equal(headers['X-Gitlab-Token'], '[REDACTED]');
    assert.equal(headers['X-Gitlab-Event'], 'Push Hook');
    assert.equal(headers['Content-Type'], 'application/json');
    assert.doesNotMatch(JSON.stringify(log), /very-secret-token|hunter2/);
    assert.equal(JSON.parse(log.request_data).ref, 'refs/heads/main');
    assert.equal(log.response_status, '200');
    assert.equal(JSON.parse(log.response_headers)['X-Receiver'], 'kiln-test');
    assert.equal(Buffer.byteLength(log.response_body), 8192, 'the body is cut at 8 KiB');
    assert.ok(log.execution_duration > 0 && log.execution_duration < 10);
    assert.equal(log.internal_error_message, null);

    // An issue event queued in the background is logged under its own trigger.
    assert.equal((await openIssue('Logged')).statusCode, 201);
    await waitFor(async () => (await logsOf(hook.id)).length >= 2, 'the issue delivery log');
    assert.equal((await logsOf(hook.id))[1].trigger, 'issue_hooks');
  });

  it('records a request that got no answer as an internal error', async () => {
    const closed = await freePort();
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken, payload: { url: `http://127.0.0.1:${closed}/gone` },
    });
    const hook = res.json();
    assert.equal((await testDelivery(hook.id)).statusCode, 422);
    const [log] = await logsOf(hook.id);
    assert.equal(log.response_status, 'internal error');
    assert.match(log.internal_error_message ?? '', /ECONNREFUSED/);
    assert.equal(log.response_body, '');
    // No answer backs the hook off (its state is kept whether or not the flag is on).
    const row = await hookRow(hook.id);
    assert.equal(row.backoff_count, 1);
    assert.ok(row.disabled_until && Date.parse(row.disabled_until) > Date.now() + 9 * 60_000);
    const shown = await getHook(hook.id);
    assert.equal(shown.alert_status, 'executable', 'with the flag off a backed-off hook still runs');
    assert.equal(shown.disabled_until, row.disabled_until);
  });

  it('with web_hooks_disable_failed on, backs a hook off after a 500 and skips it until a success', async () => {
    await setFlag(true);
    const hook = await addHook('/flaky');
    answer('/flaky', 500);
    assert.equal((await testDelivery(hook.id)).statusCode, 422);
    let shown = await getHook(hook.id);
    assert.equal(shown.alert_status, 'temporarily_disabled');
    assert.ok(Date.parse(shown.disabled_until) > Date.now());
    const logged = (await logsOf(hook.id)).length;
    const before = hits.get('/flaky');
    assert.equal((await openIssue('While disabled')).statusCode, 201);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await logsOf(hook.id)).length, logged, 'a disabled hook is not delivered to');
    assert.equal(hits.get('/flaky'), before);
    // A test delivery always runs, and its success enables the hook again.
    assert.equal((await testDelivery(hook.id)).statusCode, 201);
    shown = await getHook(hook.id);
    assert.equal(shown.alert_status, 'executable');
    assert.equal(shown.disabled_until, null);
    assert.equal((await hookRow(hook.id)).backoff_count, 0);
  });

  it('disables a hook after more than three failed answers in a row', async () => {
    const hook = await addHook('/strict');
    answer('/strict', 404, 404, 404);
    for (let i = 0; i < 3; i++) assert.equal((await testDelivery(hook.id)).statusCode, 422);
    assert.equal((await getHook(hook.id)).alert_status, 'executable', 'three strikes still run');
    answer('/strict', 410);
    assert.equal((await testDelivery(hook.id)).statusCode, 422);
    assert.equal((await hookRow(hook.id)).recent_failures, 4);
    assert.equal((await getHook(hook.id)).alert_status, 'disabled');
    const logged = (await logsOf(hook.id)).length;
    assert.equal((await openIssue('Not delivered')).statusCode, 201);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await logsOf(hook.id)).length, logged);
    // Turned off again, the flag lets every hook run.
    await setFlag(false);
    assert.equal((await getHook(hook.id)).alert_status, 'executable');
  });

  it('prunes logs older than 90 days', async () => {
    const hook = (await t.db.selectFrom('web_hooks').select('id').orderBy('id').executeTakeFirstOrThrow());
    const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
    await t.db.insertInto('web_hook_logs').values({
      web_hook_id: hook.id, trigger: 'push_hooks', url: 'http://x.example', request_headers: '{}', request_data: '{}',
      response_headers: '{}', response_body: '', response_status: '200', execution_duration: 0.1, internal_error_message: null,
      created_at: old, updated_at: old,
    }).execute();
    const count = async () => (await t.db.selectFrom('web_hook_logs').select('id').execute()).length;
    const all = await count();
    assert.equal(await pruneWebHookLogs(t.db), 1);
    assert.equal(await count(), all - 1);
  });
});
