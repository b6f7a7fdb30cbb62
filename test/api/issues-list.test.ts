/**
 * Issue lists at the HTTP boundary (issue 29): the filters and orders of IssuableFinder, the
 * confidentiality rule in rows and in X-Total, group lists over sub-groups, the instance list's
 * scopes, milestone issues and the statistics.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('issue lists', () => {
  let t: TestApp;
  let group: { id: number };
  let project: { id: number };
  let other: { id: number };
  let reporterToken: string;
  let guestToken: string;
  let guest: { id: number; username: string };
  let outsiderToken: string;
  let milestoneId: number;

  const api = (url: string, token?: string) => t.request({ url: `/api/v4${url}`, ...(token ? { token } : {}) });
  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
  const titles = async (url: string, token?: string) => {
    const res = await api(url, token);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return (res.json() as { title: string }[]).map((i) => i.title);
  };

  before(async () => {
    t = await startTestApp();
    group = (await post('/groups', ROOT_TOKEN, { name: 'team', path: 'team', visibility: 'public' })).json();
    const sub = (await post('/groups', ROOT_TOKEN, { name: 'sub', path: 'sub', parent_id: group.id, visibility: 'public' })).json();
    project = (await post('/projects', ROOT_TOKEN, { name: 'app', namespace_id: group.id, visibility: 'public' })).json();
    other = (await post('/projects', ROOT_TOKEN, { name: 'lib', namespace_id: sub.id, visibility: 'public' })).json();
    const reporter = await createUser(t.db, { username: 'rep' });
    reporterToken = await createToken(t.db, reporter);
    const g = await createUser(t.db, { username: 'gue' });
    guest = g;
    guestToken = await createToken(t.db, g);
    outsiderToken = await createToken(t.db, await createUser(t.db, { username: 'out' }));
    await post(`/projects/${project.id}/members`, ROOT_TOKEN, { user_id: reporter.id, access_level: 20 });
    await post(`/projects/${project.id}/members`, ROOT_TOKEN, { user_id: g.id, access_level: 10 });
    const now = new Date().toISOString();
    milestoneId = (await t.db.insertInto('milestones').values({
      iid: 1, project_id: project.id, group_id: null, title: 'v1', description: null, state: 'active', due_date: '2099-01-01',
      start_date: '2000-01-01', created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;
    const issues: object[] = [
      { title: 'alpha', labels: 'bug', milestone_id: milestoneId, due_date: '2000-01-01' },
      { title: 'beta', labels: 'bug,ui', assignee_ids: [g.id], description: 'searchable words' },
      { title: 'gamma', confidential: true },
      { title: 'delta', issue_type: 'incident' },
    ];
    for (const i of issues) assert.equal((await post(`/projects/${project.id}/issues`, ROOT_TOKEN, i)).statusCode, 201);
    await post(`/projects/${other.id}/issues`, ROOT_TOKEN, { title: 'epsilon' });
    await post(`/projects/${project.id}/issues`, guestToken, { title: 'zeta', confidential: true });
    const closed = (await post(`/projects/${project.id}/issues`, ROOT_TOKEN, { title: 'eta' })).json();
    await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}/issues/${closed.iid}`, token: ROOT_TOKEN, payload: { state_event: 'close' } });
  });
  after(async () => { await t?.close(); });

  it('hides confidential issues from guests and outsiders in rows and totals, but not from their authors', async () => {
    const asReporter = await api(`/projects/${project.id}/issues`, reporterToken);
    assert.equal(asReporter.headers['x-total'], '6');
    const asGuest = await titles(`/projects/${project.id}/issues`, guestToken);
    assert.deepEqual(asGuest.sort(), ['alpha', 'beta', 'delta', 'eta', 'zeta']);
    const outsider = await api(`/projects/${project.id}/issues?per_page=1`, outsiderToken);
    assert.equal(outsider.headers['x-total'], '4');
    assert.deepEqual((await titles(`/projects/${project.id}/issues`)).sort(), ['alpha', 'beta', 'delta', 'eta']);
    const stats = await api(`/projects/${project.id}/issues_statistics`, outsiderToken);
    assert.deepEqual(stats.json(), { statistics: { counts: { all: 4, closed: 1, opened: 3 } } });
  });

  it('filters by state, labels, milestone, assignee, author, type, iids, search, due date and not[]', async () => {
    const base = `/projects/${project.id}/issues`;
    assert.deepEqual(await titles(`${base}?state=closed`, reporterToken), ['eta']);
    assert.deepEqual((await titles(`${base}?labels=bug`, reporterToken)).sort(), ['alpha', 'beta']);
    assert.deepEqual(await titles(`${base}?labels=bug,ui`, reporterToken), ['beta']);
    assert.deepEqual((await titles(`${base}?labels=None&state=opened`, reporterToken)).sort(), ['delta', 'gamma', 'zeta']);
    assert.deepEqual((await titles(`${base}?labels=Any`, reporterToken)).sort(), ['alpha', 'beta']);
    assert.deepEqual(await titles(`${base}?not[labels]=bug&state=opened&issue_type=issue`, reporterToken), ['zeta', 'gamma']);
    assert.deepEqual(await titles(`${base}?milestone=v1`, reporterToken), ['alpha']);
    assert.deepEqual(await titles(`${base}?milestone=Upcoming`, reporterToken), ['alpha']);
    assert.deepEqual(await titles(`${base}?milestone_id=Started`, reporterToken), ['alpha']);
    assert.equal((await titles(`${base}?milestone=None`, reporterToken)).length, 5);
    assert.deepEqual(await titles(`${base}?assignee_id=${guest.id}`, reporterToken), ['beta']);
    assert.deepEqual(await titles(`${base}?assignee_username[]=gue`, reporterToken), ['beta']);
    assert.deepEqual(await titles(`${base}?assignee_id=Any`, reporterToken), ['beta']);
    assert.equal((await api(`${base}?assignee_id=x`, reporterToken)).statusCode, 400);
    assert.deepEqual(await titles(`${base}?author_username=gue`, reporterToken), ['zeta']);
    assert.deepEqual(await titles(`${base}?author_id=${guest.id}`, reporterToken), ['zeta']);
    assert.deepEqual(await titles(`${base}?issue_type=incident`, reporterToken), ['delta']);
    assert.deepEqual(await titles(`${base}?iids[]=1&iids[]=2&sort=asc`, reporterToken), ['alpha', 'beta']);
    assert.deepEqual(await titles(`${base}?search=SEARCHABLE`, reporterToken), ['beta']);
    assert.deepEqual(await titles(`${base}?search=searchable&in=title`, reporterToken), []);
    assert.deepEqual(await titles(`${base}?due_date=overdue`, reporterToken), ['alpha']);
    assert.deepEqual(await titles(`${base}?confidential=true`, reporterToken), ['zeta', 'gamma']);
    assert.equal((await api(`${base}?milestone=v1&milestone_id=Any`, reporterToken)).statusCode, 400);
  });

  it('orders as asked', async () => {
    const base = `/projects/${project.id}/issues?state=opened&issue_type=issue`;
    assert.deepEqual(await titles(`${base}&order_by=title&sort=asc`, reporterToken), ['alpha', 'beta', 'gamma', 'zeta']);
    assert.deepEqual(await titles(`${base}&order_by=created_at&sort=asc`, reporterToken), ['alpha', 'beta', 'gamma', 'zeta']);
    assert.deepEqual((await titles(`${base}&order_by=due_date&sort=asc`, reporterToken))[0], 'alpha');
    assert.deepEqual((await titles(`${base}&order_by=milestone_due&sort=desc`, reporterToken))[0], 'alpha');
    for (const order of ['updated_at', 'priority', 'relative_position', 'label_priority', 'popularity']) {
      assert.equal((await titles(`${base}&order_by=${order}`, reporterToken)).length, 4, order);
    }
  });

  it("lists a group's issues over its sub-groups, and the instance's by scope", async () => {
    const all = await titles(`/groups/${group.id}/issues?per_page=100`, outsiderToken);
    assert.deepEqual(all.sort(), ['alpha', 'beta', 'delta', 'epsilon', 'eta']);
    const groupRefs = (await api(`/groups/${group.id}/issues?search=epsilon`, outsiderToken)).json();
    // Another namespace's project is named in full (Project#to_reference_base: cross_namespace_reference?).
    assert.equal(groupRefs[0].references.relative, 'team/sub/lib#1');
    const own = (await api(`/groups/${group.id}/issues?search=alpha`, outsiderToken)).json();
    assert.equal(own[0].references.relative, 'app#1');
    assert.deepEqual(await titles('/issues', guestToken), ['zeta']);
    assert.deepEqual(await titles('/issues?scope=assigned_to_me', guestToken), ['beta']);
    assert.equal((await titles('/issues?scope=all', guestToken)).length, 6);
    assert.equal((await api('/issues')).statusCode, 401);
    assert.equal((await titles('/issues?scope=all')).length, 5);
    assert.equal((await titles('/issues?scope=all', ROOT_TOKEN)).length, 7);
    const stats = await api('/issues_statistics?scope=all', guestToken);
    assert.deepEqual(stats.json(), { statistics: { counts: { all: 6, closed: 1, opened: 5 } } });
    const groupStats = await api(`/groups/${group.id}/issues_statistics`, ROOT_TOKEN);
    assert.deepEqual(groupStats.json(), { statistics: { counts: { all: 7, closed: 1, opened: 6 } } });
  });

  it('lists the issues of a milestone', async () => {
    assert.deepEqual(await titles(`/projects/${project.id}/milestones/${milestoneId}/issues`, outsiderToken), ['alpha']);
    const missing = await api(`/projects/${project.id}/milestones/999999/issues`, outsiderToken);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Milestone Not Found' });
    assert.equal((await api(`/groups/${group.id}/milestones/${milestoneId}/issues`, outsiderToken)).statusCode, 404);
  });

  it('shows label details on request', async () => {
    const res = (await api(`/projects/${project.id}/issues?labels=ui&with_labels_details=true`, reporterToken)).json();
    assert.deepEqual(res[0].labels.map((l: { name: string }) => l.name), ['bug', 'ui']);
    assert.equal(res[0].labels[0].color, '#6699cc');
  });

  it('orders by label priority and milestone, and leaves archived projects out of group lists unless asked', async () => {
    const bug = await t.db.selectFrom('labels').select('id').where('title', '=', 'ui').executeTakeFirstOrThrow();
    await t.db.insertInto('label_priorities').values({ project_id: project.id, label_id: bug.id, priority: 1 }).execute();
    const byPriority = await titles(`/projects/${project.id}/issues?order_by=label_priority&sort=asc&state=opened`, reporterToken);
    assert.equal(byPriority[0], 'beta');
    const byMilestone = await titles(`/projects/${project.id}/issues?order_by=priority&sort=asc&state=opened`, reporterToken);
    assert.equal(byMilestone[0], 'alpha');
    const archived = await t.request({ method: 'POST', url: `/api/v4/projects/${other.id}/archive`, token: ROOT_TOKEN });
    assert.equal(archived.statusCode, 201, archived.body);
    assert.ok(!(await titles(`/groups/${group.id}/issues`, outsiderToken)).includes('epsilon'));
    assert.ok((await titles(`/groups/${group.id}/issues?non_archived=false`, outsiderToken)).includes('epsilon'));
    await t.request({ method: 'POST', url: `/api/v4/projects/${other.id}/unarchive`, token: ROOT_TOKEN });
  });

  it('counts searches against the search rate limit', async () => {
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 2 } });
    assert.equal(set.statusCode, 200, set.body);
    try {
      // A caller who has not searched this minute.
      const searcher = await createToken(t.db, await createUser(t.db, { username: 'searcher' }));
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await api(`/projects/${project.id}/issues?search=alpha`, searcher)).statusCode);
      assert.deepEqual(statuses, [200, 200, 429]);
      // Lists without a search are not limited.
      assert.equal((await api(`/projects/${project.id}/issues`, searcher)).statusCode, 200);
    } finally {
      await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 30 } });
    }
  });

  it("takes a group's milestone, shows its group web_url, and lists it among the group milestone's issues", async () => {
    const now = new Date().toISOString();
    const gm = await t.db.insertInto('milestones').values({
      iid: 1, project_id: null, group_id: group.id, title: 'g1', description: null, state: 'active', due_date: null, start_date: null,
      created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const created = (await post(`/projects/${project.id}/issues`, ROOT_TOKEN, { title: 'theta', milestone_id: gm.id })).json();
    assert.equal(created.milestone.group_id, group.id);
    assert.match(created.milestone.web_url, /\/groups\/team\/-\/milestones\/1$/);
    assert.deepEqual(await titles(`/groups/${group.id}/milestones/${gm.id}/issues`, outsiderToken), ['theta']);
  });
});

