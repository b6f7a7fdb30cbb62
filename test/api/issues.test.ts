/**
 * One issue at the HTTP boundary (issue 29): opening one with the Service's parameter rules,
 * reading it, changing it with every side effect the Service writes (resource events, system
 * notes, events, todos), closing and reopening it, removing it, and the ghost user keeping a
 * deleted author's issues.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('issues', () => {
  let t: TestApp;
  let project: { id: number; path_with_namespace: string };
  let dev: { id: number; username: string };
  let devToken: string;
  let guest: { id: number; username: string };
  let guestToken: string;

  const api = (method: string, url: string, token: string | undefined, payload?: object, headers?: Record<string, string>) =>
    t.request({ method: method as 'GET', url: `/api/v4${url}`, ...(token ? { token } : {}), ...(payload ? { payload } : {}), ...(headers ? { headers } : {}) });

  before(async () => {
    t = await startTestApp();
    const p = await api('POST', '/projects', ROOT_TOKEN, { name: 'tracker', visibility: 'private' });
    assert.equal(p.statusCode, 201, p.body);
    project = p.json();
    const d = await createUser(t.db, { username: 'dev1' });
    dev = d;
    devToken = await createToken(t.db, d);
    const g = await createUser(t.db, { username: 'guest1' });
    guest = g;
    guestToken = await createToken(t.db, g);
    for (const [id, level] of [[d.id, 30], [g.id, 10]]) {
      const m = await api('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: id, access_level: level });
      assert.equal(m.statusCode, 201, m.body);
    }
  });
  after(async () => { await t?.close(); });

  it('opens an issue with labels, milestone, assignee and due date, writing what the Service writes', async () => {
    const ms = await t.db.insertInto('milestones').values({
      iid: 1, project_id: project.id, group_id: null, title: 'v1', description: null, state: 'active', due_date: null, start_date: null,
      created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
    }).returning('id').executeTakeFirstOrThrow();
    const res = await api('POST', `/projects/${project.id}/issues`, devToken, {
      title: 'First bug', description: 'Hello @guest1 and @nobody', labels: 'bug,ui', assignee_ids: [guest.id],
      milestone_id: ms.id, due_date: '2026-12-24', confidential: false,
    }, { 'user-agent': 'kiln-test/1' });
    assert.equal(res.statusCode, 201, res.body);
    const issue = res.json();
    assert.equal(issue.iid, 1);
    assert.equal(issue.title, 'First bug');
    assert.deepEqual(issue.labels, ['bug', 'ui']);
    assert.equal(issue.milestone.title, 'v1');
    assert.deepEqual(issue.assignees.map((a: { id: number }) => a.id), [guest.id]);
    assert.equal(issue.assignee.id, guest.id);
    assert.equal(issue.due_date, '2026-12-24');
    assert.equal(issue.state, 'opened');
    assert.equal(issue.type, 'ISSUE');
    assert.equal(issue.references.short, '#1');
    assert.equal(issue.references.relative, '#1');
    assert.equal(issue.subscribed, true);
    const labels = await t.db.selectFrom('labels').selectAll().where('project_id', '=', project.id).orderBy('title').execute();
    assert.deepEqual(labels.map((l) => [l.title, l.color]), [['bug', '#6699cc'], ['ui', '#6699cc']]);
    const labelEvents = await t.db.selectFrom('resource_label_events').selectAll().where('issue_id', '=', issue.id).execute();
    assert.equal(labelEvents.length, 2);
    const msEvents = await t.db.selectFrom('resource_milestone_events').selectAll().where('issue_id', '=', issue.id).execute();
    assert.deepEqual(msEvents.map((e) => [e.action, e.milestone_id]), [['add', ms.id]]);
    const notes = await t.db.selectFrom('notes').select(['note', 'system_action']).where('noteable_id', '=', issue.id).execute();
    assert.deepEqual(notes, [{ note: 'changed due date to December 24, 2026', system_action: 'due_date' }]);
    const events = await t.db.selectFrom('events').select(['action', 'target_type']).where('target_id', '=', issue.id).execute();
    assert.deepEqual(events, [{ action: 'created', target_type: 'Issue' }]);
    const todos = await t.db.selectFrom('todos').select(['user_id', 'action']).where('target_id', '=', issue.id).orderBy('action').execute();
    assert.deepEqual(todos, [{ user_id: guest.id, action: 1 }, { user_id: guest.id, action: 2 }]);
    const ua = await t.db.selectFrom('user_agent_details').selectAll().where('subject_id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(ua.user_agent, 'kiln-test/1');
  });

  it("drops a guest's triage values silently and keeps confidentiality", async () => {
    const res = await api('POST', `/projects/${project.id}/issues`, guestToken, {
      title: 'Guest issue', labels: ['secret'], assignee_ids: [dev.id], due_date: '2026-01-01', confidential: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    const issue = res.json();
    assert.deepEqual(issue.labels, []);
    assert.deepEqual(issue.assignees, []);
    assert.equal(issue.due_date, null);
    assert.equal(issue.confidential, true);
    const secret = await t.db.selectFrom('labels').select('id').where('title', '=', 'secret').executeTakeFirst();
    assert.equal(secret, undefined);
  });

  it('takes a blank iid as not given, numbering the issue itself', async () => {
    const res = await api('POST', `/projects/${project.id}/issues`, ROOT_TOKEN, { title: 'blank iid', iid: '' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(typeof res.json().iid, 'number');
  });

  it('validates the title and bounds', async () => {
    const missing = await api('POST', `/projects/${project.id}/issues`, devToken, { description: 'x' });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: '400 Bad request - "title" not given' });
    const long = await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'x'.repeat(256) });
    assert.equal(long.statusCode, 400);
    const blank = await api('POST', `/projects/${project.id}/issues`, devToken, { title: '  ' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: { title: ["can't be blank"] } });
  });

  it('lets owners and administrators choose iid and created_at, and refuses a duplicate iid with 409', async () => {
    const devTry = await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'd', iid: 500, created_at: '2020-01-01T00:00:00Z' });
    assert.equal(devTry.statusCode, 201);
    assert.notEqual(devTry.json().iid, 500);
    assert.notEqual(devTry.json().created_at.slice(0, 4), '2020');
    const root = await api('POST', `/projects/${project.id}/issues`, ROOT_TOKEN, { title: 'r', iid: 500, created_at: '2020-01-01T00:00:00Z' });
    assert.equal(root.statusCode, 201, root.body);
    assert.equal(root.json().iid, 500);
    assert.equal(root.json().created_at.slice(0, 10), '2020-01-01');
    const dup = await api('POST', `/projects/${project.id}/issues`, ROOT_TOKEN, { title: 'r', iid: 500 });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual(dup.json(), { message: 'Duplicated issue' });
    const next = await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'after' });
    assert.equal(next.json().iid, 501);
  });

  it('updates with system notes and resource events, closes and reopens', async () => {
    const created = (await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'Old title', labels: 'bug' })).json();
    const url = `/projects/${project.id}/issues/${created.iid}`;
    const res = await api('PUT', url, devToken, {
      title: 'New title', description: 'now with @guest1', add_labels: 'feature', remove_labels: 'bug', assignee_ids: [guest.id],
      confidential: true, discussion_locked: true, due_date: '2027-01-02',
    });
    assert.equal(res.statusCode, 200, res.body);
    const issue = res.json();
    assert.equal(issue.title, 'New title');
    assert.deepEqual(issue.labels, ['feature']);
    assert.equal(issue.confidential, true);
    assert.equal(issue.discussion_locked, true);
    const notes = (await t.db.selectFrom('notes').select('note').where('noteable_id', '=', created.id).orderBy('id').execute()).map((n) => n.note);
    assert.deepEqual(notes, [
      'changed title from **{-Old-} title** to **{+New+} title**',
      'changed the description',
      `assigned to @${guest.username}`,
      'made the issue confidential',
      'changed due date to January 2, 2027',
      'locked this issue',
    ]);
    const labelEvents = await t.db.selectFrom('resource_label_events').select('action').where('issue_id', '=', created.id).orderBy('id').execute();
    assert.deepEqual(labelEvents.map((e) => e.action), ['add', 'add', 'remove']);

    const closed = await api('PUT', url, devToken, { state_event: 'close' });
    assert.equal(closed.json().state, 'closed');
    assert.equal(closed.json().closed_by.id, dev.id);
    assert.ok(closed.json().closed_at);
    const reopened = await api('PUT', url, devToken, { state_event: 'reopen', assignee_ids: [] });
    assert.equal(reopened.json().state, 'opened');
    assert.equal(reopened.json().closed_at, null);
    assert.deepEqual(reopened.json().assignees, []);
    const states = await t.db.selectFrom('resource_state_events').select('state').where('issue_id', '=', created.id).orderBy('id').execute();
    assert.deepEqual(states.map((s) => s.state), ['closed', 'reopened']);
    const events = await t.db.selectFrom('events').select('action').where('target_id', '=', created.id).orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.action), ['created', 'closed', 'reopened']);

    const nothing = await api('PUT', url, devToken, {});
    assert.equal(nothing.statusCode, 400);
  });

  it('reads one issue, by global id for administrators only, and deletes for owners', async () => {
    const created = (await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'to delete' })).json();
    const one = await api('GET', `/projects/${project.id}/issues/${created.iid}`, guestToken);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().id, created.id);
    assert.equal((await api('GET', `/projects/${project.id}/issues/99999`, devToken)).json().message, '404 Issue Not Found');
    assert.equal((await api('GET', `/issues/${created.id}`, devToken)).statusCode, 403);
    const byId = await api('GET', `/issues/${created.id}`, ROOT_TOKEN);
    assert.equal(byId.statusCode, 200);
    assert.equal(byId.json().iid, created.iid);
    assert.equal((await api('DELETE', `/projects/${project.id}/issues/${created.iid}`, devToken)).statusCode, 403);
    assert.equal((await api('DELETE', `/projects/${project.id}/issues/${created.iid}`, ROOT_TOKEN)).statusCode, 204);
    assert.equal((await api('GET', `/projects/${project.id}/issues/${created.iid}`, ROOT_TOKEN)).statusCode, 404);
  });

  it("moves a deleted author's issues to the ghost user", async () => {
    const leaver = await createUser(t.db, { username: 'leaver' });
    await api('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: leaver.id, access_level: 30 });
    const token = await createToken(t.db, leaver);
    const created = (await api('POST', `/projects/${project.id}/issues`, token, { title: 'orphan' })).json();
    const del = await api('DELETE', `/users/${leaver.id}`, ROOT_TOKEN);
    assert.equal(del.statusCode, 204, del.body);
    const after = await api('GET', `/projects/${project.id}/issues/${created.iid}`, ROOT_TOKEN);
    assert.equal(after.statusCode, 200);
    assert.equal(after.json().author.username, 'ghost');
  });

  it('clears the milestone with 0, takes a group milestone, ignores a foreign one, and lets owners set updated_at', async () => {
    const created = (await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'planned' })).json();
    const url = `/projects/${project.id}/issues/${created.iid}`;
    const now = new Date().toISOString();
    const foreign = (await api('POST', '/projects', ROOT_TOKEN, { name: 'elsewhere' })).json();
    const foreignMs = await t.db.insertInto('milestones').values({
      iid: 1, project_id: foreign.id, group_id: null, title: 'theirs', description: null, state: 'active', due_date: null,
      start_date: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const own = await t.db.insertInto('milestones').values({
      iid: 2, project_id: project.id, group_id: null, title: 'ours', description: null, state: 'active', due_date: null,
      start_date: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    assert.equal((await api('PUT', url, devToken, { milestone_id: own.id })).json().milestone.title, 'ours');
    assert.equal((await api('PUT', url, devToken, { milestone_id: foreignMs.id })).json().milestone, null);
    await api('PUT', url, devToken, { milestone_id: own.id });
    assert.equal((await api('PUT', url, devToken, { milestone_id: 0 })).json().milestone, null);
    const events = await t.db.selectFrom('resource_milestone_events').select(['action', 'milestone_id']).where('issue_id', '=', created.id)
      .orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.action), ['add', 'remove', 'add', 'remove']);
    const devStamp = await api('PUT', url, devToken, { title: 'planned 2', updated_at: '2021-01-01T00:00:00Z' });
    assert.notEqual(devStamp.json().updated_at.slice(0, 4), '2021');
    const rootStamp = await api('PUT', url, ROOT_TOKEN, { updated_at: '2021-01-01T00:00:00Z' });
    assert.equal(rootStamp.json().updated_at.slice(0, 10), '2021-01-01');
  });

  it('gives newly mentioned readers a todo on update, once', async () => {
    const created = (await api('POST', `/projects/${project.id}/issues`, devToken, { title: 'mentions' })).json();
    const url = `/projects/${project.id}/issues/${created.iid}`;
    await api('PUT', url, devToken, { description: 'cc @guest1' });
    await api('PUT', url, devToken, { description: 'cc @guest1 again' });
    const todos = await t.db.selectFrom('todos').select(['user_id', 'action']).where('target_id', '=', created.id).execute();
    assert.deepEqual(todos, [{ user_id: guest.id, action: 2 }]);
    // Neither author, assignee nor commenter: not subscribed.
    const bystander = await api('GET', `/projects/${project.id}/issues/${created.iid}`, ROOT_TOKEN);
    assert.equal(bystander.json().subscribed, false);
  });

  it('keeps one label per scope, the one applied last (scoped labels, issue 29)', async () => {
    const created = await api('POST', `/projects/${project.id}/issues`, devToken, {
      title: 'scoped', labels: 'workflow::doing,priority::high,workflow::review,plain',
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().labels, ['plain', 'priority::high', 'workflow::review']);
    const url = `/projects/${project.id}/issues/${created.json().iid}`;
    const added = await api('PUT', url, devToken, { add_labels: 'workflow::done' });
    assert.deepEqual(added.json().labels, ['plain', 'priority::high', 'workflow::done']);
    // A nested scope is its own scope: `a::b::c` is scoped by `a::b`, not by `a`.
    const nested = await api('PUT', url, devToken, { add_labels: 'workflow::done::fast' });
    assert.deepEqual(nested.json().labels, ['plain', 'priority::high', 'workflow::done', 'workflow::done::fast']);
    const replaced = await api('PUT', url, devToken, { labels: 'priority::low,priority::high' });
    assert.deepEqual(replaced.json().labels, ['priority::high']);
    const events = await api('GET', `${url}/resource_label_events?per_page=100`, devToken);
    assert.ok(events.json().some((e: { action: string; label: { name: string } }) => e.action === 'remove' && e.label.name === 'workflow::review'));
  });
});
