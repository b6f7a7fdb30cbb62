/**
 * Labels of projects and groups (issue 29, item 1): CRUD by id and by title, colours (hex, short
 * hex, CSS names; invalid ones refused), the project's view of its groups' labels, priorities,
 * counts, subscriptions, promotion to the group, and who may read and write them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { nowIso } from '../../src/domain/clock.ts';
import { scopeOf } from '../../src/domain/labels/scoped.ts';
import { availableLabels, findOrCreateProjectLabels } from '../../src/domain/labels/labels.queries.ts';

describe('labels', () => {
  let t: TestApp;
  let group: { id: number; full_path: string };
  let sub: { id: number };
  let project: { id: number };
  let privateProject: { id: number };
  let guestToken: string;
  let reporterToken: string;
  let strangerToken: string;

  const req = (method: string, url: string, token?: string, payload?: Record<string, unknown>) =>
    t.request({ method: method as 'GET', url: `/api/v4${url}`, token, payload });

  before(async () => {
    t = await startTestApp();
    group = (await req('POST', '/groups', ROOT_TOKEN, { name: 'Planning', path: 'planning', visibility: 'public' })).json();
    sub = (await req('POST', '/groups', ROOT_TOKEN, { name: 'Sub', path: 'sub', parent_id: group.id, visibility: 'public' })).json();
    project = (await req('POST', '/projects', ROOT_TOKEN, { name: 'board', namespace_id: sub.id, visibility: 'public' })).json();
    privateProject = (await req('POST', '/projects', ROOT_TOKEN, { name: 'secret', namespace_id: sub.id, visibility: 'private' })).json();
    const guest = await createUser(t.db);
    const reporter = await createUser(t.db);
    const stranger = await createUser(t.db);
    guestToken = await createToken(t.db, guest, { scopes: ['api'] });
    reporterToken = await createToken(t.db, reporter, { scopes: ['api'] });
    strangerToken = await createToken(t.db, stranger, { scopes: ['api'] });
    for (const [u, level] of [[guest, 10], [reporter, 20]] as const) {
      const res = await req('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: u.id, access_level: level });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => { await t.close(); });

  it('scopeOf gives the scope before the last ::', () => {
    assert.equal(scopeOf('workflow::ready'), 'workflow');
    assert.equal(scopeOf('a::b::c'), 'a::b');
    assert.equal(scopeOf('plain'), null);
    assert.equal(scopeOf('a:b'), null);
  });

  it('creates project labels with colours as the Service reads them, and refuses bad ones', async () => {
    let res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'bug', color: '#d9534f', description: 'A **bug**' });
    assert.equal(res.statusCode, 201, res.body);
    const bug = res.json();
    assert.deepEqual(
      { ...bug, id: 0 },
      {
        id: 0, name: 'bug', color: '#d9534f', description: 'A **bug**', description_html: 'A <strong>bug</strong>',
        text_color: '#FFFFFF', remove_on_close: false, subscribed: false, priority: null, is_project_label: true,
      },
    );
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'short', color: '#fe8', priority: 3 });
    assert.deepEqual([res.statusCode, res.json().color, res.json().text_color, res.json().priority], [201, '#ffee88', '#333333', 3]);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'named', color: 'Red' });
    assert.equal(res.json().color, '#FF0000');
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'bad', color: 'reddish' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { color: ['must be a valid color code'] } }]);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'a,b', color: '#fff' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['is invalid'] } }]);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'x'.repeat(256), color: '#fff' });
    assert.deepEqual(res.json(), { message: { title: ['is too long (maximum is 255 characters)'] } });
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'bug', color: '#000000' });
    assert.deepEqual([res.statusCode, res.json()], [409, { message: 'Label already exists' }]);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { color: '#000000' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "name" not given' }]);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'neg', color: '#000', priority: -1 });
    assert.equal(res.statusCode, 400);
  });

  it('lets guests read but not write, and keeps private projects and anonymous callers out', async () => {
    let res = await req('GET', `/projects/${project.id}/labels`, guestToken);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['bug', 'named', 'short']);
    res = await req('POST', `/projects/${project.id}/labels`, guestToken, { name: 'nope', color: '#000' });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await req('GET', `/projects/${project.id}/labels`);
    assert.equal(res.statusCode, 401);
    res = await req('GET', `/projects/${project.id}/labels`, strangerToken);
    assert.equal(res.statusCode, 200);
    res = await req('GET', `/projects/${privateProject.id}/labels`, strangerToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  });

  it('reads, changes and deletes a label by id or by title', async () => {
    const bug = (await req('GET', `/projects/${project.id}/labels/bug`, guestToken)).json();
    let res = await req('GET', `/projects/${project.id}/labels/${bug.id}`, guestToken);
    assert.equal(res.json().name, 'bug');
    res = await req('GET', `/projects/${project.id}/labels/missing`, guestToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
    res = await req('PUT', `/projects/${project.id}/labels/bug`, reporterToken, { new_name: 'defect', color: 'navy', priority: 7 });
    assert.deepEqual([res.statusCode, res.json().name, res.json().color, res.json().priority], [200, 'defect', '#000080', 7]);
    res = await req('PUT', `/projects/${project.id}/labels/${bug.id}`, reporterToken, { priority: '' });
    assert.equal(res.json().priority, null);
    res = await req('PUT', `/projects/${project.id}/labels/defect`, reporterToken, { new_name: 'short' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['has already been taken'] } }]);
    res = await req('PUT', `/projects/${project.id}/labels/defect`, reporterToken, {});
    assert.equal(res.statusCode, 400);
    res = await req('PUT', `/projects/${project.id}/labels/defect`, guestToken, { color: '#fff' });
    assert.equal(res.statusCode, 403);
    res = await req('PUT', `/projects/${project.id}/labels`, reporterToken, { name: 'defect', description: 'via the old form' });
    assert.equal(res.json().description, 'via the old form');
    // Blank values are not written (Label#title= and #description= take present values only).
    res = await req('PUT', `/projects/${project.id}/labels/defect`, reporterToken, { new_name: ' ', description: '' });
    assert.deepEqual([res.statusCode, res.json().name, res.json().description], [200, 'defect', 'via the old form']);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: '<b>tagged</b> &amp; co', color: '#fff' });
    assert.deepEqual([res.statusCode, res.json().name], [201, 'tagged & co']);
    await req('DELETE', `/projects/${project.id}/labels/${res.json().id}`, reporterToken);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: ' ', color: '#fff' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ["can't be blank"] } }]);
    res = await req('DELETE', `/projects/${project.id}/labels/named`, reporterToken);
    assert.equal(res.statusCode, 204);
    res = await req('DELETE', `/projects/${project.id}/labels`, reporterToken, { name: 'named' });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
  });

  it('shows group labels to the projects below, filters by search, and counts issues', async () => {
    let res = await req('POST', `/groups/${group.id}/labels`, ROOT_TOKEN, { name: 'workflow::ready', color: '#428bca' });
    assert.equal(res.statusCode, 201, res.body);
    const groupLabel = res.json();
    assert.equal('is_project_label' in groupLabel, false);
    res = await req('POST', `/projects/${project.id}/labels`, reporterToken, { name: 'workflow::ready', color: '#000' });
    assert.deepEqual([res.statusCode, res.json()], [409, { message: 'Label already exists' }]);
    res = await req('GET', `/projects/${project.id}/labels`, guestToken);
    const names = res.json().map((l: { name: string; is_project_label: boolean }) => [l.name, l.is_project_label]);
    assert.deepEqual(names, [['defect', true], ['short', true], ['workflow::ready', false]]);
    res = await req('GET', `/projects/${project.id}/labels?include_ancestor_groups=false`, guestToken);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['defect', 'short']);
    res = await req('GET', `/projects/${project.id}/labels?search=DEF`, guestToken);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['defect']);

    // An open and a closed issue carrying the project label; a confidential one only Reporters count.
    const now = nowIso();
    const defect = (await req('GET', `/projects/${project.id}/labels/defect`, guestToken)).json();
    const author = (await t.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id;
    for (const [iid, state, confidential] of [[1, 'opened', 0], [2, 'closed', 0], [3, 'opened', 1]] as const) {
      const issue = await t.db.insertInto('issues').values({
        iid, project_id: project.id, author_id: author, title: `i${iid}`, state, confidential, created_at: now, updated_at: now,
      }).returning('id').executeTakeFirstOrThrow();
      await t.db.insertInto('label_links').values({
        label_id: defect.id, target_type: 'Issue', target_id: issue.id, created_at: now, updated_at: now,
      }).execute();
    }
    const countsFor = async (token: string) => {
      const list = (await req('GET', `/projects/${project.id}/labels?with_counts=true`, token)).json();
      const l = list.find((x: { name: string }) => x.name === 'defect');
      return [l.open_issues_count, l.closed_issues_count, l.open_merge_requests_count];
    };
    assert.deepEqual(await countsFor(guestToken), [1, 1, 0]);
    assert.deepEqual(await countsFor(reporterToken), [2, 1, 0]);
    res = await req('GET', `/projects/${project.id}/labels`, guestToken);
    assert.equal('open_issues_count' in res.json()[0], false);
  });

  it('manages group labels: Reporters of the group write, members read, outsiders of a private group see 404', async () => {
    const priv = (await req('POST', '/groups', ROOT_TOKEN, { name: 'Hidden', path: 'hidden', visibility: 'private' })).json();
    const member = await createUser(t.db);
    const memberToken = await createToken(t.db, member, { scopes: ['api'] });
    await req('POST', `/groups/${priv.id}/members`, ROOT_TOKEN, { user_id: member.id, access_level: 10 });
    let res = await req('POST', `/groups/${priv.id}/labels`, memberToken, { name: 'x', color: '#fff' });
    assert.equal(res.statusCode, 403);
    res = await req('POST', `/groups/${priv.id}/labels`, ROOT_TOKEN, { name: 'x', color: '#fff' });
    assert.equal(res.statusCode, 201);
    res = await req('GET', `/groups/${priv.id}/labels`, memberToken);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['x']);
    res = await req('GET', `/groups/${priv.id}/labels`, strangerToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);
    res = await req('PUT', `/groups/${priv.id}/labels/x`, ROOT_TOKEN, { new_name: 'y', color: '#123456' });
    assert.deepEqual([res.json().name, res.json().color], ['y', '#123456']);
    res = await req('POST', `/groups/${priv.id}/labels`, ROOT_TOKEN, { name: 'y', color: '#fff' });
    assert.equal(res.statusCode, 409);

    // Sub-group views: ancestors by default, descendants and project labels on request.
    res = await req('GET', `/groups/${sub.id}/labels`, ROOT_TOKEN);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['workflow::ready']);
    res = await req('GET', `/groups/${sub.id}/labels?include_ancestor_groups=false`, ROOT_TOKEN);
    assert.deepEqual(res.json(), []);
    res = await req('GET', `/groups/${group.id}/labels?only_group_labels=false&include_descendant_groups=true`, ROOT_TOKEN);
    assert.deepEqual(res.json().map((l: { name: string }) => l.name), ['defect', 'short', 'workflow::ready']);
    res = await req('DELETE', `/groups/${priv.id}/labels/y`, ROOT_TOKEN);
    assert.equal(res.statusCode, 204);
    res = await req('GET', `/groups/${priv.id}/labels/y`, ROOT_TOKEN);
    assert.equal(res.statusCode, 404);
  });

  it('subscribes and unsubscribes, answering 304 when nothing changes', async () => {
    let res = await req('POST', `/projects/${project.id}/labels/short/subscribe`, guestToken);
    assert.deepEqual([res.statusCode, res.json().subscribed], [201, true]);
    res = await req('POST', `/projects/${project.id}/labels/short/subscribe`, guestToken);
    assert.equal(res.statusCode, 304);
    res = await req('GET', `/projects/${project.id}/labels/short`, reporterToken);
    assert.equal(res.json().subscribed, false);
    res = await req('POST', `/projects/${project.id}/labels/short/unsubscribe`, guestToken);
    assert.deepEqual([res.statusCode, res.json().subscribed], [201, false]);
    res = await req('POST', `/groups/${group.id}/labels/workflow::ready/subscribe`, guestToken);
    assert.deepEqual([res.statusCode, res.json().subscribed], [201, true]);
  });

  it('promotes a project label to the group, merging the same-titled labels of its projects', async () => {
    const other = (await req('POST', '/projects', ROOT_TOKEN, { name: 'other', namespace_id: sub.id })).json();
    await req('POST', `/projects/${other.id}/labels`, ROOT_TOKEN, { name: 'defect', color: '#00ff00' });
    const before = (await req('GET', `/projects/${project.id}/labels/defect`, ROOT_TOKEN)).json();
    let res = await req('PUT', `/projects/${project.id}/labels/defect/promote`, guestToken);
    assert.equal(res.statusCode, 403);
    res = await req('PUT', `/projects/${project.id}/labels/defect/promote`, ROOT_TOKEN);
    assert.equal(res.statusCode, 200, res.body);
    const promoted = res.json();
    assert.deepEqual([promoted.name, promoted.color], ['defect', before.color]);
    assert.notEqual(promoted.id, before.id);
    const left = await t.db.selectFrom('labels').select(['id', 'project_id', 'group_id']).where('title', '=', 'defect').execute();
    assert.deepEqual(left, [{ id: promoted.id, project_id: null, group_id: sub.id }]);
    const links = await t.db.selectFrom('label_links').select('label_id').execute();
    assert.ok(links.length === 3 && links.every((l) => l.label_id === promoted.id));
    res = await req('GET', `/projects/${project.id}/labels/defect`, ROOT_TOKEN);
    assert.equal(res.json().is_project_label, false);
    // A personal project has no group to promote to.
    const mine = (await req('POST', '/projects', ROOT_TOKEN, { name: 'mine' })).json();
    await req('POST', `/projects/${mine.id}/labels`, ROOT_TOKEN, { name: 'solo', color: '#000' });
    res = await req('PUT', `/projects/${mine.id}/labels/solo/promote`, ROOT_TOKEN);
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Failed to promote project label to group label' }]);
  });

  it('finds or creates project labels by title for the issues area, concurrently without failing', async () => {
    const lineage = [sub.id, group.id];
    const found = await availableLabels(t.db, { projectId: project.id, groupLineage: lineage }, ['short', 'workflow::ready', 'none']);
    assert.deepEqual(found.map((l) => l.title), ['short', 'workflow::ready']);
    const made = await Promise.all([1, 2, 3].map(() => t.db.transaction().execute(
      (trx) => findOrCreateProjectLabels(trx, project.id, lineage, ['fresh', 'short'], nowIso()),
    )));
    for (const rows of made) assert.deepEqual(rows.map((r) => [r.title, r.color]), [['fresh', '#6699cc'], ['short', '#ffee88']]);
    assert.equal(new Set(made.map((rows) => rows[0].id)).size, 1);
  });
});
