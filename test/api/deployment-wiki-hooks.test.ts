/**
 * Deployment and wiki page events reaching project hooks (issue 31, item 9): each deployment
 * status change made through the deployments API, and each wiki page created, changed and
 * deleted through the wikis API, is delivered to a local receiver in the Service's payload shape
 * (Gitlab::DataBuilder::Deployment, Gitlab::DataBuilder::WikiPage) with its X-Gitlab-Event.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';

interface Received { event: string; body: any }

describe('deployment and wiki page hooks', () => {
  let t: TestApp;
  let p: CiProject;
  let server: http.Server;
  let sha: string;
  const received: Received[] = [];

  async function waitFor(pred: () => boolean, what: string): Promise<void> {
    const end = Date.now() + 15_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(received.map((r) => r.event))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ event: String(req.headers['x-gitlab-event']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t = await startTestApp({ KILN_JOB_POLL_MS: '50' });
    p = await createCiProject(t);
    sha = await pushFiles(t, p, { 'README.md': '# deployed\n' }, { message: 'Ship the readme\n\nWith a body.' });
    let res = await t.request({
      method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: true },
    });
    assert.equal(res.statusCode, 200);
    res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken,
      payload: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, push_events: false, deployment_events: true, wiki_page_events: true },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  after(async () => {
    await t.close();
    server.close();
  });

  it('delivers a deployment event for each status change', async () => {
    let res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/deployments`, token: p.ownerToken,
      payload: { environment: 'staging', sha, ref: 'main', tag: false, status: 'running' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id;
    res = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}/deployments/${id}`, token: p.ownerToken, payload: { status: 'success' } });
    assert.equal(res.statusCode, 200, res.body);
    await waitFor(() => received.filter((r) => r.event === 'Deployment Hook').length >= 2, 'two deployment events');
    const events = received.filter((r) => r.event === 'Deployment Hook').map((r) => r.body);
    assert.deepEqual(events.map((e) => e.status).sort(), ['running', 'success']);
    const e = events.find((x) => x.status === 'success');
    assert.equal(e.object_kind, 'deployment');
    assert.equal(e.deployment_id, id);
    assert.equal(e.deployable_id, null);
    assert.equal(e.deployable_url, null);
    assert.equal(e.environment, 'staging');
    assert.equal(e.environment_slug, 'staging');
    assert.equal(e.short_sha, sha.slice(0, 8));
    assert.equal(e.commit_title, 'Ship the readme');
    assert.equal(e.commit_url, `http://kiln.test/${p.fullPath}/-/commit/${sha}`);
    assert.equal(e.project.id, p.project.id);
    assert.equal(e.user.username, p.owner.username);
    assert.equal(e.user_url, `http://kiln.test/${p.owner.username}`);
    assert.match(e.status_changed_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  });

  it('delivers wiki page events on create, update and delete', async () => {
    const base = `/api/v4/projects/${p.project.id}/wikis`;
    let res = await t.request({ method: 'POST', url: base, token: p.ownerToken, payload: { title: 'Runbook', content: 'first' } });
    assert.equal(res.statusCode, 201, res.body);
    res = await t.request({ method: 'PUT', url: `${base}/Runbook`, token: p.ownerToken, payload: { content: 'second' } });
    assert.equal(res.statusCode, 200, res.body);
    res = await t.request({ method: 'DELETE', url: `${base}/Runbook`, token: p.ownerToken });
    assert.equal(res.statusCode, 204, res.body);
    await waitFor(() => received.filter((r) => r.event === 'Wiki Page Hook').length >= 3, 'three wiki page events');
    const events = received.filter((r) => r.event === 'Wiki Page Hook').map((r) => r.body);
    const byAction = Object.fromEntries(events.map((e) => [e.object_attributes.action, e]));
    assert.deepEqual(Object.keys(byAction).sort(), ['create', 'delete', 'update']);
    const created = byAction.create;
    assert.equal(created.object_kind, 'wiki_page');
    assert.equal(created.user.username, p.owner.username);
    assert.equal(created.project.id, p.project.id);
    assert.equal(created.wiki.path_with_namespace, `${p.fullPath}.wiki`);
    assert.equal(created.wiki.web_url, `http://kiln.test/${p.fullPath}/-/wikis/home`);
    assert.equal(created.wiki.git_http_url, `http://kiln.test/${p.fullPath}.wiki.git`);
    assert.deepEqual(
      { ...created.object_attributes },
      {
        title: 'Runbook', content: 'first', format: 'markdown', message: `${p.owner.username} created page: Runbook`, slug: 'Runbook',
        url: `http://kiln.test/${p.fullPath}/-/wikis/Runbook`, action: 'create',
      },
    );
    assert.equal(byAction.update.object_attributes.content, 'second');
    assert.equal(byAction.delete.object_attributes.message, `${p.owner.username} deleted page: Runbook`);
  });
});
