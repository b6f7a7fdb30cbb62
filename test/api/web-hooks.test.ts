/**
 * Webhooks (issue 31, item 4): project hooks and system hooks over the API with the Service's
 * fields, permissions and messages (python-gitlab's test_project_hooks and test_hooks too), and
 * real deliveries to a local receiver: refused by default (allow_local_requests_from_web_hooks_and_services),
 * the event and token headers, push and pipeline payloads, the branch filter, a redirect not
 * followed, and an error answer retried with back-off.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

describe('webhooks', () => {
  let t: TestApp;
  let p: CiProject;
  let receiverUrl: string;
  let server: http.Server;
  const received: Received[] = [];
  let flakyFailures = 0;

  async function setting(name: string, value: boolean): Promise<void> {
    const res = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { [name]: value } });
    assert.equal(res.statusCode, 200, res.body);
  }

  async function addHook(payload: Record<string, unknown>, project = p): Promise<any> {
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${project.project.id}/hooks`, token: project.ownerToken, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  async function waitFor(pred: () => boolean, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out; received ${JSON.stringify(received.map((r) => r.path))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function commit(project: CiProject, branch: string, file: string, startBranch?: string): Promise<string> {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.project.id}/repository/commits`, token: project.ownerToken,
      payload: {
        branch, commit_message: `Change ${file}\n\nBody line.`, ...(startBranch ? { start_branch: startBranch } : {}),
        actions: [{ action: 'create', file_path: file, content: 'hello\n' }],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        received.push({ path: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : null });
        if (req.url?.startsWith('/redirect')) {
          res.writeHead(302, { location: '/redirected' }).end();
        } else if (req.url?.startsWith('/flaky') && flakyFailures < 2) {
          flakyFailures++;
          res.writeHead(500).end('not yet');
        } else if (req.url?.startsWith('/teapot')) {
          res.writeHead(418).end('short and stout');
        } else {
          res.writeHead(200).end('ok');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp();
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: echo hi\n', 'README.md': '# hooks\n' });
  });

  after(async () => {
    await t.close();
    server.close();
  });

  it('refuses local addresses unless the instance allows them', async () => {
    for (const url of [`${receiverUrl}/ok`, 'http://localhost/x', 'http://10.1.2.3/', 'http://[::1]:99/', 'http://169.254.169.254/latest']) {
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken, payload: { url } });
      assert.equal(res.statusCode, 422, url);
      assert.deepEqual(res.json(), { message: 'Invalid url given' });
    }
    const bad = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken, payload: { url: 'ftp://example.com/' } });
    assert.equal(bad.statusCode, 422);
    const sys = await t.request({ method: 'POST', url: '/api/v4/hooks', token: ROOT_TOKEN, payload: { url: 'gopher://example.com/' } });
    assert.equal(sys.statusCode, 400);
    assert.deepEqual(sys.json(), { message: { url: ['is blocked: Only allowed schemes are http, https'] } });
  });

  it('manages project hooks with every flag; the token is never shown', async () => {
    const hook = await addHook({ url: 'http://hook.example/x', token: 'secret-1', note_events: true, push_events_branch_filter: 'release/*' });
    assert.equal(hook.url, 'http://hook.example/x');
    assert.equal(hook.project_id, p.project.id);
    assert.equal(hook.push_events, true);
    assert.equal(hook.note_events, true);
    assert.equal(hook.job_events, false);
    assert.equal(hook.enable_ssl_verification, true);
    assert.equal(hook.push_events_branch_filter, 'release/*');
    assert.ok(!('token' in hook));
    const row = await t.db.selectFrom('web_hooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
    assert.ok(row.token_sealed && !row.token_sealed.includes('secret-1'), 'the token is sealed at rest');

    let res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/hooks`, token: p.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((h: { id: number }) => h.id), [hook.id]);

    res = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken,
      payload: { url: 'http://hook.example/y', releases_events: true, enable_ssl_verification: false },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().url, 'http://hook.example/y');
    assert.equal(res.json().releases_events, true);
    assert.equal(res.json().note_events, true);
    assert.equal(res.json().enable_ssl_verification, false);

    res = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken,
      payload: { url: 'http://hook.example/y', push_events_branch_filter: 'bad..name' },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { message: 'Invalid branch filter given' });

    res = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken, payload: { note_events: false } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: '400 Bad request - "url" not given' });

    // A Developer may not manage hooks; another project's hook is not found through this one.
    const dev = await createUser(t.db);
    await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: ROOT_TOKEN, payload: { user_id: dev.id, access_level: 30 } });
    res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/hooks`, token: await createToken(t.db, dev) });
    assert.equal(res.statusCode, 403);
    const other = await createCiProject(t);
    res = await t.request({ method: 'GET', url: `/api/v4/projects/${other.project.id}/hooks/${hook.id}`, token: other.ownerToken });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Not found' });

    res = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken });
    assert.equal(res.statusCode, 404);
  });

  it('delivers a push with the event and token headers, only for branches the filter matches', async () => {
    await setting('allow_local_requests_from_web_hooks_and_services', true);
    const hook = await addHook({ url: `${receiverUrl}/push`, token: 'push-secret' });
    await addHook({ url: `${receiverUrl}/filtered`, push_events_branch_filter: 'release/*' });
    const sha = await commit(p, 'main', 'pushed.txt');
    await waitFor(() => received.some((r) => r.path === '/push'));
    const got = received.find((r) => r.path === '/push')!;
    assert.equal(got.headers['x-gitlab-event'], 'Push Hook');
    assert.equal(got.headers['x-gitlab-token'], 'push-secret');
    assert.equal(got.headers['x-gitlab-instance'], 'http://kiln.test');
    assert.match(String(got.headers['x-gitlab-event-uuid']), /^[0-9a-f-]{36}$/);
    assert.equal(got.headers['content-type'], 'application/json');
    const b = got.body;
    assert.equal(b.object_kind, 'push');
    assert.equal(b.event_name, 'push');
    assert.equal(b.ref, 'refs/heads/main');
    assert.equal(b.after, sha);
    assert.equal(b.checkout_sha, sha);
    assert.equal(b.user_id, p.owner.id);
    assert.equal(b.user_username, p.owner.username);
    assert.equal(b.project_id, p.project.id);
    assert.equal(b.project.path_with_namespace, p.fullPath);
    assert.equal(b.project.web_url, `http://kiln.test/${p.fullPath}`);
    assert.equal(b.project.git_http_url, `http://kiln.test/${p.fullPath}.git`);
    assert.equal(b.total_commits_count, 1);
    assert.equal(b.commits.length, 1);
    assert.equal(b.commits[0].id, sha);
    assert.equal(b.commits[0].title, 'Change pushed.txt');
    assert.equal(b.commits[0].message, 'Change pushed.txt\n\nBody line.');
    assert.deepEqual(b.commits[0].added, ['pushed.txt']);
    assert.equal(b.commits[0].url, `http://kiln.test/${p.fullPath}/-/commit/${sha}`);
    assert.equal(b.repository.homepage, `http://kiln.test/${p.fullPath}`);

    // The filtered hook hears a matching branch only.
    await commit(p, 'release/1', 'release.txt', 'main');
    await waitFor(() => received.some((r) => r.path === '/filtered'));
    const filtered = received.filter((r) => r.path === '/filtered');
    assert.equal(filtered.length, 1);
    assert.equal(filtered[0].body.ref, 'refs/heads/release/1');
    await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/hooks/${hook.id}`, token: p.ownerToken });
  });

  it('delivers pipeline events', async () => {
    const q = await createCiProject(t);
    await pushFiles(t, q, { '.gitlab-ci.yml': 'stages: [test]\nunit:\n  stage: test\n  script: echo hi\n' });
    await addHook({ url: `${receiverUrl}/pipeline`, push_events: false, pipeline_events: true }, q);
    await addHook({ url: `${receiverUrl}/job`, push_events: false, job_events: true }, q);
    const pipeline = await createPipeline(t, q);
    await waitFor(() => received.some((r) => r.path === '/pipeline'));
    const got = received.find((r) => r.path === '/pipeline')!;
    assert.equal(got.headers['x-gitlab-event'], 'Pipeline Hook');
    assert.equal(got.headers['x-gitlab-token'], undefined);
    const b = got.body;
    assert.equal(b.object_kind, 'pipeline');
    assert.equal(b.object_attributes.id, pipeline.id);
    assert.equal(b.object_attributes.ref, 'main');
    assert.equal(b.object_attributes.sha, pipeline.sha);
    assert.equal(b.object_attributes.source, 'api');
    assert.equal(b.object_attributes.status, 'pending');
    assert.equal(b.object_attributes.detailed_status, 'pending');
    assert.deepEqual(b.object_attributes.stages, ['test']);
    assert.match(b.object_attributes.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    assert.equal(b.user.id, q.owner.id);
    assert.equal(b.project.path_with_namespace, q.fullPath);
    assert.ok(!('homepage' in b.project));
    assert.equal(b.commit.id, pipeline.sha);
    assert.equal(b.builds.length, 1);
    assert.equal(b.builds[0].name, 'unit');
    assert.equal(b.builds[0].stage, 'test');
    assert.equal(b.builds[0].status, 'pending');
    assert.equal(b.merge_request, null);
    // The job's move to pending reaches the job hook.
    await waitFor(() => received.some((r) => r.path === '/job'));
    const job = received.find((r) => r.path === '/job')!;
    assert.equal(job.headers['x-gitlab-event'], 'Job Hook');
    assert.equal(job.body.object_kind, 'build');
    assert.equal(job.body.build_id, b.builds[0].id);
    assert.equal(job.body.build_name, 'unit');
    assert.equal(job.body.build_stage, 'test');
    assert.equal(job.body.build_status, 'pending');
    assert.equal(job.body.pipeline_id, pipeline.id);
    assert.equal(job.body.sha, pipeline.sha);
    assert.equal(job.body.commit.sha, pipeline.sha);
    assert.equal(job.body.project_id, q.project.id);
    assert.equal(job.body.user.id, q.owner.id);
    // Pushes are not this hook's.
    assert.ok(!received.some((r) => r.path === '/pipeline' && r.body.object_kind === 'push'));
  });

  it('does not follow a redirect, retries an error answer with back-off, and tests a hook on demand', async () => {
    const q = await createCiProject(t);
    await pushFiles(t, q, { 'README.md': '# q\n' });
    const redirect = await addHook({ url: `${receiverUrl}/redirect` }, q);
    await addHook({ url: `${receiverUrl}/flaky` }, q);
    await commit(q, 'main', 'again.txt');
    await waitFor(() => received.filter((r) => r.path === '/flaky').length >= 3);
    assert.equal(received.filter((r) => r.path === '/flaky').length, 3, 'two failures and one success');
    assert.equal(received.filter((r) => r.path === '/redirect').length, 1, 'a redirect answer is delivered, not retried');
    assert.ok(!received.some((r) => r.path === '/redirected'), 'the redirect is not followed');

    // The test route sends now: a 2xx passes, anything else is 422 with the answer's body.
    const ok = await addHook({ url: `${receiverUrl}/tested` }, q);
    let res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${ok.id}/test/push_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { message: '201 Created' });
    const tested = received.find((r) => r.path === '/tested')!;
    assert.equal(tested.headers['x-gitlab-event'], 'Push Hook');
    assert.equal(tested.body.ref, 'refs/heads/main');
    const teapot = await addHook({ url: `${receiverUrl}/teapot` }, q);
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${teapot.id}/test/push_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { message: 'short and stout' });
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${ok.id}/test/pipeline_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { message: 'Ensure the project has CI pipelines.' });
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${redirect.id}/test/push_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.ok(!received.some((r) => r.path === '/redirected'));

    const empty = await createCiProject(t);
    const hook = await addHook({ url: `${receiverUrl}/empty` }, empty);
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${empty.project.id}/hooks/${hook.id}/test/push_events`, token: empty.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { message: 'Ensure the project has at least one commit.' });

    // A name (not an address) saved while local requests were allowed: checked on the addresses it resolves to.
    const name = os.hostname();
    const resolved = await dns.lookup(name, { all: true }).catch(() => []);
    const byName = resolved.length > 0 && resolved.every((r) => r.address.startsWith('127.') || r.address === '::1')
      ? await addHook({ url: `http://${name}:${new URL(receiverUrl).port}/by-name` }, q) : null;
    // Once local requests are refused again, a saved hook's delivery is refused before any request.
    await setting('allow_local_requests_from_web_hooks_and_services', false);
    const before = received.length;
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${ok.id}/test/push_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.match(res.json().message, /blocked/);
    if (byName) {
      res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/hooks/${byName.id}/test/push_events`, token: q.ownerToken });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json(), { message: 'URL is blocked: Requests to localhost are not allowed' });
    }
    await commit(q, 'main', 'refused.txt');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(received.length, before, 'nothing reached the receiver');
    assert.ok(!received.some((r) => r.path === '/by-name'));
    await setting('allow_local_requests_from_web_hooks_and_services', true);
  });

  it('delivers issue, comment, merge request and release events once their writes committed', async () => {
    const q = await createCiProject(t);
    await pushFiles(t, q, { 'README.md': '# records\n' });
    await addHook({
      url: `${receiverUrl}/records`, push_events: false, issues_events: true, confidential_issues_events: true, note_events: true,
      merge_requests_events: true, releases_events: true,
    }, q);
    const api = `/api/v4/projects/${q.project.id}`;
    let res = await t.request({ method: 'POST', url: `${api}/issues`, token: q.ownerToken, payload: { title: 'Broken', labels: 'bug' } });
    assert.equal(res.statusCode, 201, res.body);
    const issue = res.json();
    res = await t.request({ method: 'PUT', url: `${api}/issues/${issue.iid}`, token: q.ownerToken, payload: { state_event: 'close', title: 'Fixed' } });
    assert.equal(res.statusCode, 200, res.body);
    res = await t.request({ method: 'POST', url: `${api}/issues/${issue.iid}/notes`, token: q.ownerToken, payload: { body: 'Thanks' } });
    assert.equal(res.statusCode, 201, res.body);
    const note = res.json();
    await commit(q, 'feature', 'feature.txt', 'main');
    res = await t.request({
      method: 'POST', url: `${api}/merge_requests`, token: q.ownerToken,
      payload: { source_branch: 'feature', target_branch: 'main', title: 'Add feature' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const mr = res.json();
    res = await t.request({ method: 'POST', url: `${api}/releases`, token: q.ownerToken, payload: { tag_name: 'v1.0', ref: 'main', name: 'One' } });
    assert.equal(res.statusCode, 201, res.body);

    const records = () => received.filter((r) => r.path === '/records');
    await waitFor(() => records().length >= 5);
    const byEvent = (event: string) => records().filter((r) => r.headers['x-gitlab-event'] === event).map((r) => r.body);
    const issues = byEvent('Issue Hook');
    assert.deepEqual(issues.map((b) => b.object_attributes.action).sort(), ['close', 'open']);
    const opened = issues.find((b) => b.object_attributes.action === 'open');
    assert.equal(opened.object_kind, 'issue');
    assert.equal(opened.object_attributes.iid, issue.iid);
    assert.equal(opened.object_attributes.url, `http://kiln.test/${q.fullPath}/-/issues/${issue.iid}`);
    assert.deepEqual(opened.labels.map((l: { title: string }) => l.title), ['bug']);
    assert.equal(opened.user.username, q.owner.username);
    const closed = issues.find((b) => b.object_attributes.action === 'close');
    assert.equal(closed.object_attributes.state, 'closed');
    assert.deepEqual(closed.changes.title, { previous: 'Broken', current: 'Fixed' });

    const [comment] = byEvent('Note Hook');
    assert.equal(comment.object_kind, 'note');
    assert.equal(comment.object_attributes.id, note.id);
    assert.equal(comment.object_attributes.noteable_type, 'Issue');
    assert.equal(comment.issue.iid, issue.iid);
    assert.equal(comment.object_attributes.url, `http://kiln.test/${q.fullPath}/-/issues/${issue.iid}#note_${note.id}`);

    const [opening] = byEvent('Merge Request Hook');
    assert.equal(opening.object_kind, 'merge_request');
    assert.equal(opening.object_attributes.action, 'open');
    assert.equal(opening.object_attributes.iid, mr.iid);
    assert.equal(opening.object_attributes.source_branch, 'feature');
    assert.equal(opening.object_attributes.target.path_with_namespace, q.fullPath);
    assert.equal(opening.object_attributes.last_commit.title, 'Change feature.txt');
    assert.equal(opening.object_attributes.last_commit.url.startsWith(`http://kiln.test/${q.fullPath}/-/commit/`), true);

    const [release] = byEvent('Release Hook');
    assert.equal(release.object_kind, 'release');
    assert.equal(release.action, 'create');
    assert.equal(release.tag, 'v1.0');
    assert.equal(release.name, 'One');
    assert.equal(release.url, `http://kiln.test/${q.fullPath}/-/releases/v1.0`);

    // A test delivery of a record event is built from the project's first record of its kind.
    const tested = await addHook({ url: `${receiverUrl}/record-test`, push_events: false }, q);
    res = await t.request({ method: 'POST', url: `${api}/hooks/${tested.id}/test/issues_events`, token: q.ownerToken });
    assert.equal(res.statusCode, 201, res.body);
    const sample = received.find((r) => r.path === '/record-test')!;
    assert.equal(sample.headers['x-gitlab-event'], 'Issue Hook');
    assert.equal(sample.body.object_attributes.iid, issue.iid);
    const bare = await createCiProject(t);
    const bareHook = await addHook({ url: `${receiverUrl}/bare` }, bare);
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${bare.project.id}/hooks/${bareHook.id}/test/merge_requests_events`, token: bare.ownerToken });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json(), { message: 'Ensure the project has merge requests.' });
  });

  it('manages and tests system hooks (administrators)', async () => {
    const user = await createUser(t.db);
    const userToken = await createToken(t.db, user);
    let res = await t.request({ method: 'GET', url: '/api/v4/hooks', token: userToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url: '/api/v4/hooks', token: ROOT_TOKEN, payload: { url: `${receiverUrl}/system`, token: 'sys-secret' } });
    assert.equal(res.statusCode, 201, res.body);
    const hook = res.json();
    assert.deepEqual(Object.keys(hook).sort(), [
      'alert_status', 'created_at', 'disabled_until', 'enable_ssl_verification', 'id', 'merge_requests_events', 'push_events',
      'repository_update_events', 'tag_push_events', 'url',
    ]);
    assert.equal(hook.alert_status, 'executable');
    assert.equal(hook.push_events, false);
    assert.equal(hook.repository_update_events, true);
    res = await t.request({ method: 'GET', url: '/api/v4/hooks', token: ROOT_TOKEN });
    assert.deepEqual(res.json().map((h: { id: number }) => h.id), [hook.id]);
    res = await t.request({ method: 'GET', url: `/api/v4/hooks/${hook.id}`, token: ROOT_TOKEN });
    assert.equal(res.json().url, `${receiverUrl}/system`);

    res = await t.request({ method: 'POST', url: `/api/v4/hooks/${hook.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().event_name, 'project_create');
    const got = received.find((r) => r.path === '/system')!;
    assert.equal(got.headers['x-gitlab-event'], 'System Hook');
    assert.equal(got.headers['x-gitlab-token'], 'sys-secret');
    assert.equal(got.body.event_name, 'project_create');

    // By default a system hook hears repository updates: every push.
    const sha = await commit(p, 'main', 'system.txt');
    await waitFor(() => received.some((r) => r.path === '/system' && r.body.event_name === 'repository_update'));
    const update = received.find((r) => r.path === '/system' && r.body.event_name === 'repository_update')!;
    assert.equal(update.headers['x-gitlab-event'], 'System Hook');
    assert.equal(update.body.project_id, p.project.id);
    assert.deepEqual(update.body.refs, ['refs/heads/main']);
    assert.equal(update.body.changes[0].after, sha);

    res = await t.request({ method: 'DELETE', url: `/api/v4/hooks/${hook.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'GET', url: `/api/v4/hooks/${hook.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 System hook Not Found' });
  });
});
