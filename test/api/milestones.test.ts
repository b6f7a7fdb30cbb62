/**
 * Milestones of projects and groups (issue 29, item 2): CRUD with iids per owner, state events
 * and their events, the list filters, parent groups' milestones, validation messages, who may
 * read and write, deletion leaving issues without a milestone, promotion to the group.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { nowIso } from '../../src/domain/clock.ts';

describe('milestones', () => {
  let t: TestApp;
  let group: { id: number };
  let project: { id: number; web_url: string };
  let privateProject: { id: number };
  let guestToken: string;
  let reporterToken: string;
  let strangerToken: string;

  const req = (method: string, url: string, token?: string, payload?: Record<string, unknown>) =>
    t.request({ method: method as 'GET', url: `/api/v4${url}`, token, payload });
  const titles = (res: { json(): unknown }) => (res.json() as { title: string }[]).map((m) => m.title);

  before(async () => {
    t = await startTestApp();
    group = (await req('POST', '/groups', ROOT_TOKEN, { name: 'Plans', path: 'plans', visibility: 'public' })).json();
    project = (await req('POST', '/projects', ROOT_TOKEN, { name: 'app', namespace_id: group.id, visibility: 'public' })).json();
    privateProject = (await req('POST', '/projects', ROOT_TOKEN, { name: 'hidden', namespace_id: group.id, visibility: 'private' })).json();
    const guest = await createUser(t.db);
    const reporter = await createUser(t.db);
    guestToken = await createToken(t.db, guest, { scopes: ['api'] });
    reporterToken = await createToken(t.db, reporter, { scopes: ['api'] });
    strangerToken = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
    await req('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: guest.id, access_level: 10 });
    await req('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: reporter.id, access_level: 20 });
  });
  after(async () => { await t.close(); });

  it('creates project milestones numbered per project, with the Service entity', async () => {
    let res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, {
      title: 'v1.0', description: 'first', due_date: '2000-01-02', start_date: '2000-01-01',
    });
    assert.equal(res.statusCode, 201, res.body);
    const m = res.json();
    assert.deepEqual(
      { ...m, id: 0, created_at: '', updated_at: '' },
      {
        id: 0, iid: 1, project_id: project.id, title: 'v1.0', description: 'first', state: 'active', created_at: '', updated_at: '',
        due_date: '2000-01-02', start_date: '2000-01-01', expired: true, web_url: `${project.web_url}/-/milestones/1`,
      },
    );
    res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, { title: 'v2.0', due_date: '2999-01-01' });
    assert.deepEqual([res.json().iid, res.json().expired], [2, false]);
    res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, { title: 'v1.0' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['already being used for another group or project milestone.'] } }]);
    res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, { title: 'x', due_date: '2000-01-01', start_date: '2000-02-01' });
    assert.deepEqual(res.json(), { message: { due_date: ['must be greater than start date'] } });
    res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, { title: 'x'.repeat(256) });
    assert.deepEqual(res.json(), { message: { title: ['is too long (maximum is 255 characters)'] } });
    res = await req('POST', `/projects/${project.id}/milestones`, reporterToken, {});
    assert.deepEqual(res.json(), { message: '400 Bad request - "title" not given' });
    res = await req('POST', `/projects/${project.id}/milestones`, guestToken, { title: 'nope' });
    assert.equal(res.statusCode, 403);
    res = await req('POST', `/projects/${project.id}/milestones`, undefined, { title: 'nope' });
    assert.equal(res.statusCode, 401);
  });

  it('reads milestones anonymously on public projects, never on private ones', async () => {
    let res = await req('GET', `/projects/${project.id}/milestones`);
    assert.deepEqual([res.statusCode, titles(res)], [200, ['v2.0', 'v1.0']]);
    res = await req('GET', `/projects/${privateProject.id}/milestones`, strangerToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
    res = await req('GET', `/projects/${project.id}/milestones/999999`, guestToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Milestone Not Found' }]);
  });

  it('closes and reopens with state_event, recording events, and filters lists', async () => {
    const list = (await req('GET', `/projects/${project.id}/milestones?iids[]=1`, guestToken)).json();
    const v1 = list[0];
    assert.equal(v1.title, 'v1.0');
    let res = await req('PUT', `/projects/${project.id}/milestones/${v1.id}`, reporterToken, { state_event: 'close', title: 'v1.0.0' });
    assert.deepEqual([res.statusCode, res.json().state, res.json().title], [200, 'closed', 'v1.0.0']);
    res = await req('GET', `/projects/${project.id}/milestones?state=closed`, guestToken);
    assert.deepEqual(titles(res), ['v1.0.0']);
    res = await req('GET', `/projects/${project.id}/milestones?state=active`, guestToken);
    assert.deepEqual(titles(res), ['v2.0']);
    res = await req('GET', `/projects/${project.id}/milestones?search=V2`, guestToken);
    assert.deepEqual(titles(res), ['v2.0']);
    res = await req('GET', `/projects/${project.id}/milestones?title=v1.0.0`, guestToken);
    assert.deepEqual(titles(res), ['v1.0.0']);
    res = await req('GET', `/projects/${project.id}/milestones?updated_after=2999-01-01T00:00:00Z`, guestToken);
    assert.deepEqual(res.json(), []);
    res = await req('PUT', `/projects/${project.id}/milestones/${v1.id}`, reporterToken, { state_event: 'activate' });
    assert.equal(res.json().state, 'active');
    res = await req('PUT', `/projects/${project.id}/milestones/${v1.id}`, reporterToken, { state_event: 'shut' });
    assert.equal(res.statusCode, 400);
    res = await req('PUT', `/projects/${project.id}/milestones/${v1.id}`, reporterToken, {});
    assert.equal(res.statusCode, 400);
    const events = await t.db.selectFrom('events').select('action').where('target_type', '=', 'Milestone').where('target_id', '=', v1.id)
      .orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.action), ['created', 'closed', 'reopened']);
    res = await req('GET', `/projects/${project.id}/milestones/${v1.id}/merge_requests`, guestToken);
    assert.deepEqual([res.statusCode, res.json(), res.headers['x-total']], [200, [], '0']);
  });

  it('manages group milestones, shows them to projects with include_parent_milestones', async () => {
    let res = await req('POST', `/groups/${group.id}/milestones`, ROOT_TOKEN, { title: 'Q1' });
    assert.equal(res.statusCode, 201, res.body);
    const q1 = res.json();
    assert.deepEqual([q1.iid, q1.group_id, 'project_id' in q1], [1, group.id, false]);
    assert.match(q1.web_url, /\/groups\/plans\/-\/milestones\/1$/);
    res = await req('POST', `/groups/${group.id}/milestones`, ROOT_TOKEN, { title: 'v2.0' });
    assert.deepEqual(res.json(), { message: { title: ['already being used for another group or project milestone.'] } });
    res = await req('POST', `/groups/${group.id}/milestones`, reporterToken, { title: 'Q2' });
    assert.equal(res.statusCode, 403);
    res = await req('GET', `/projects/${project.id}/milestones?include_parent_milestones=true`, guestToken);
    assert.deepEqual(titles(res), ['Q1', 'v2.0', 'v1.0.0']);
    res = await req('GET', `/groups/${group.id}/milestones`);
    assert.deepEqual(titles(res), ['Q1']);
    res = await req('PUT', `/groups/${group.id}/milestones/${q1.id}`, ROOT_TOKEN, { description: 'quarter', state_event: 'close' });
    assert.deepEqual([res.json().description, res.json().state], ['quarter', 'closed']);
    res = await req('DELETE', `/groups/${group.id}/milestones/${q1.id}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 204);
    res = await req('GET', `/groups/${group.id}/milestones/${q1.id}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 404);
  });

  it('deletes a milestone leaving its issues without one, and promotes another to the group', async () => {
    const [v2, v1] = (await req('GET', `/projects/${project.id}/milestones`, guestToken)).json();
    const author = (await t.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id;
    const now = nowIso();
    const issue = await t.db.insertInto('issues').values({
      iid: 1, project_id: project.id, author_id: author, title: 'i', state: 'opened', milestone_id: v1.id, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    let res = await req('DELETE', `/projects/${project.id}/milestones/${v1.id}`, reporterToken);
    assert.equal(res.statusCode, 204);
    let row = await t.db.selectFrom('issues').select('milestone_id').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(row.milestone_id, null);

    await t.db.updateTable('issues').set({ milestone_id: v2.id }).where('id', '=', issue.id).execute();
    res = await req('POST', `/projects/${project.id}/milestones/${v2.id}/promote`, reporterToken);
    assert.equal(res.statusCode, 403);
    res = await req('POST', `/projects/${project.id}/milestones/${v2.id}/promote`, ROOT_TOKEN);
    assert.equal(res.statusCode, 200, res.body);
    const promoted = res.json();
    assert.deepEqual([promoted.title, promoted.group_id, promoted.due_date], ['v2.0', group.id, '2999-01-01']);
    row = await t.db.selectFrom('issues').select('milestone_id').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(row.milestone_id, promoted.id);
    res = await req('GET', `/projects/${project.id}/milestones/${v2.id}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 404);
  });
});
