/**
 * Issue boards of projects and groups (issue 29, item 5): boards CRUD (never the last one),
 * label lists appended, moved and removed with positions kept contiguous, the Service's errors,
 * and who may read and write them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('issue boards', () => {
  let t: TestApp;
  let group: { id: number };
  let project: { id: number };
  let privateProject: { id: number };
  let guestToken: string;
  let reporterToken: string;
  let strangerToken: string;
  const labelIds: Record<string, number> = {};

  const req = (method: string, url: string, token?: string, payload?: Record<string, unknown>) =>
    t.request({ method: method as 'GET', url: `/api/v4${url}`, token, payload });
  const positions = async (boardUrl: string) => ((await req('GET', `${boardUrl}/lists`, ROOT_TOKEN)).json() as {
    label: { name: string }; position: number;
  }[]).map((l) => [l.label.name, l.position]);

  before(async () => {
    t = await startTestApp();
    group = (await req('POST', '/groups', ROOT_TOKEN, { name: 'Boards', path: 'boards-group', visibility: 'public' })).json();
    project = (await req('POST', '/projects', ROOT_TOKEN, { name: 'kanban', namespace_id: group.id, visibility: 'public' })).json();
    privateProject = (await req('POST', '/projects', ROOT_TOKEN, { name: 'private', namespace_id: group.id, visibility: 'private' })).json();
    const guest = await createUser(t.db);
    const reporter = await createUser(t.db);
    guestToken = await createToken(t.db, guest, { scopes: ['api'] });
    reporterToken = await createToken(t.db, reporter, { scopes: ['api'] });
    strangerToken = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
    await req('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: guest.id, access_level: 10 });
    await req('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: reporter.id, access_level: 20 });
    for (const name of ['todo', 'doing', 'done']) {
      labelIds[name] = (await req('POST', `/projects/${project.id}/labels`, ROOT_TOKEN, { name, color: '#336699' })).json().id;
    }
    labelIds.team = (await req('POST', `/groups/${group.id}/labels`, ROOT_TOKEN, { name: 'team', color: '#fff' })).json().id;
  });
  after(async () => { await t.close(); });

  it('creates, reads, changes and deletes project boards, keeping the last one', async () => {
    let res = await req('GET', `/projects/${project.id}/boards`, guestToken);
    assert.deepEqual([res.statusCode, res.json()], [200, []]);
    res = await req('POST', `/projects/${project.id}/boards`, reporterToken, { name: 'Development' });
    assert.equal(res.statusCode, 201, res.body);
    const board = res.json();
    assert.deepEqual(
      { ...board, id: 0, project: board.project.id },
      {
        id: 0, name: 'Development', hide_backlog_list: false, hide_closed_list: false, project: project.id, group: null,
        milestone: null, assignee: null, labels: [], weight: null, lists: [],
      },
    );
    const kinds = await t.db.selectFrom('board_lists').select('list_type').where('board_id', '=', board.id).orderBy('list_type').execute();
    assert.deepEqual(kinds.map((k) => k.list_type), ['backlog', 'closed']);
    res = await req('POST', `/projects/${project.id}/boards`, guestToken, { name: 'nope' });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await req('POST', `/projects/${project.id}/boards`, reporterToken, {});
    assert.deepEqual(res.json(), { message: '400 Bad request - "name" not given' });
    res = await req('PUT', `/projects/${project.id}/boards/${board.id}`, reporterToken, { name: 'Dev', hide_closed_list: true });
    assert.deepEqual([res.json().name, res.json().hide_closed_list, res.json().hide_backlog_list], ['Dev', true, false]);
    const second = (await req('POST', `/projects/${project.id}/boards`, reporterToken, { name: 'Second' })).json();
    res = await req('DELETE', `/projects/${project.id}/boards/${second.id}`, reporterToken);
    assert.equal(res.statusCode, 204);
    res = await req('GET', `/projects/${project.id}/boards/${second.id}`, guestToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    // The last board goes too (python-gitlab's test_project_boards deletes a project's only board).
    res = await req('DELETE', `/projects/${project.id}/boards/${board.id}`, reporterToken);
    assert.equal(res.statusCode, 204);
    assert.deepEqual((await req('GET', `/projects/${project.id}/boards`, guestToken)).json(), []);
    res = await req('GET', `/projects/${project.id}/boards`);
    assert.equal(res.statusCode, 401);
    res = await req('GET', `/projects/${privateProject.id}/boards`, strangerToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  });

  it('gives lists added at once positions of their own (the board row is locked while positions are derived)', async () => {
    const board = (await req('POST', `/projects/${project.id}/boards`, reporterToken, { name: 'Race' })).json();
    const url = `/projects/${project.id}/boards/${board.id}`;
    const added = await Promise.all(['todo', 'doing', 'done', 'team'].map((name) =>
      req('POST', `${url}/lists`, reporterToken, { label_id: labelIds[name] })));
    assert.deepEqual(added.map((r) => r.statusCode), [201, 201, 201, 201]);
    assert.deepEqual((await positions(url)).map(([, p]) => p), [0, 1, 2, 3]);
    assert.equal((await req('DELETE', `/projects/${project.id}/boards/${board.id}`, reporterToken)).statusCode, 204);
  });

  it('appends, moves and removes label lists with contiguous positions', async () => {
    const board = (await req('POST', `/projects/${project.id}/boards`, reporterToken, { name: 'Lists' })).json();
    const url = `/projects/${project.id}/boards/${board.id}`;
    for (const name of ['todo', 'doing', 'done', 'team']) {
      const res = await req('POST', `${url}/lists`, reporterToken, { label_id: labelIds[name] });
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.deepEqual(await positions(url), [['todo', 0], ['doing', 1], ['done', 2], ['team', 3]]);
    let res = await req('POST', `${url}/lists`, reporterToken, { label_id: labelIds.todo });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { label_id: ['has already been taken'] } }]);
    res = await req('POST', `${url}/lists`, reporterToken, { label_id: 999999 });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'Label not found!' }]);
    const lists = (await req('GET', `${url}/lists`, guestToken)).json();
    const done = lists.find((l: { label: { name: string } }) => l.label.name === 'done');
    assert.deepEqual(Object.keys(done), ['id', 'label', 'position', 'max_issue_count', 'max_issue_weight', 'limit_metric']);
    res = await req('PUT', `${url}/lists/${done.id}`, reporterToken, { position: 0 });
    assert.deepEqual([res.statusCode, res.json().position], [200, 0]);
    assert.deepEqual(await positions(url), [['done', 0], ['todo', 1], ['doing', 2], ['team', 3]]);
    res = await req('PUT', `${url}/lists/${done.id}`, reporterToken, { position: 3 });
    assert.deepEqual(await positions(url), [['todo', 0], ['doing', 1], ['team', 2], ['done', 3]]);
    res = await req('PUT', `${url}/lists/${done.id}`, reporterToken, { position: 9 });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'List could not be moved!' }]);
    res = await req('PUT', `${url}/lists/${done.id}`, guestToken, { position: 0 });
    assert.equal(res.statusCode, 403);
    res = await req('GET', `${url}/lists/${done.id}`, guestToken);
    assert.equal(res.json().label.name, 'done');
    const todo = lists.find((l: { label: { name: string } }) => l.label.name === 'todo');
    res = await req('DELETE', `${url}/lists/${todo.id}`, reporterToken);
    assert.equal(res.statusCode, 204);
    assert.deepEqual(await positions(url), [['doing', 0], ['team', 1], ['done', 2]]);
    res = await req('GET', `${url}/lists/${todo.id}`, guestToken);
    assert.equal(res.statusCode, 404);
    res = await req('GET', `/projects/${project.id}/boards/${board.id}`, guestToken);
    assert.deepEqual(res.json().lists.map((l: { label: { name: string } }) => l.label.name), ['doing', 'team', 'done']);
    // Deleting a label takes its lists with it.
    await req('DELETE', `/projects/${project.id}/labels/doing`, ROOT_TOKEN);
    assert.deepEqual((await positions(url)).map(([n]) => n), ['team', 'done']);
  });

  it('manages group boards with the group labels as lists', async () => {
    let res = await req('POST', `/groups/${group.id}/boards`, reporterToken, { name: 'Group board' });
    assert.equal(res.statusCode, 403);
    res = await req('POST', `/groups/${group.id}/boards`, ROOT_TOKEN, { name: 'Group board' });
    assert.equal(res.statusCode, 201, res.body);
    const board = res.json();
    assert.deepEqual([board.project, board.group.id, board.group.web_url.endsWith('/groups/boards-group')], [null, group.id, true]);
    const url = `/groups/${group.id}/boards/${board.id}`;
    res = await req('POST', `${url}/lists`, ROOT_TOKEN, { label_id: labelIds.todo });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'Label not found!' }]);
    res = await req('POST', `${url}/lists`, ROOT_TOKEN, { label_id: labelIds.team });
    assert.deepEqual([res.statusCode, res.json().position, res.json().label.name], [201, 0, 'team']);
    res = await req('GET', `/groups/${group.id}/boards`, strangerToken);
    assert.deepEqual(res.json().map((b: { name: string }) => b.name), ['Group board']);
    res = await req('PUT', url, ROOT_TOKEN, { hide_backlog_list: true });
    assert.equal(res.json().hide_backlog_list, true);
    res = await req('GET', `/projects/${project.id}/boards/${board.id}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 404);
  });
});
