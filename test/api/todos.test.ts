/** Todos: adding one for an issue, listing with filters, readable targets only, marking one and all done. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { createTodos } from '../../src/domain/todos/todos.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createProjectWithMembers } from '../helpers/issues.ts';

describe('todos', () => {
  let t: TestApp;
  let owner: UserRow;
  let guest: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let project: { id: number; path_with_namespace: string };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    guest = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    project = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 10 }]);
  });
  after(async () => { await t.close(); });

  const list = (token: string, query = '') => t.request({ method: 'GET', url: `/api/v4/todos${query}`, token });

  it('adds a todo for an issue once while it is pending, and shows it as the Service does', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id, title: 'Fix the thing' });
    const url = `/api/v4/projects/${project.id}/issues/${issue.iid}/todo`;
    const res = await t.request({ method: 'POST', url, token: guestToken });
    assert.equal(res.statusCode, 201, res.body);
    const todo = res.json();
    assert.deepEqual(Object.keys(todo), [
      'id', 'project', 'author', 'action_name', 'target_type', 'target', 'target_url', 'body', 'state', 'created_at', 'updated_at',
    ]);
    assert.equal(todo.action_name, 'marked');
    assert.equal(todo.target_type, 'Issue');
    assert.equal(todo.target.id, issue.id);
    assert.equal(todo.target.references.full, `${project.path_with_namespace}#${issue.iid}`);
    assert.equal(todo.target_url, `http://kiln.test/${project.path_with_namespace}/-/issues/${issue.iid}`);
    assert.equal(todo.body, 'Fix the thing');
    assert.equal(todo.state, 'pending');
    assert.equal(todo.author.id, guest.id);
    assert.deepEqual(Object.keys(todo.project), ['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at']);
    assert.equal(todo.project.path_with_namespace, project.path_with_namespace);

    const again = await t.request({ method: 'POST', url, token: guestToken });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    // Another user has their own.
    assert.equal((await t.request({ method: 'POST', url, token: ownerToken })).statusCode, 201);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/issues/999/todo`, token: guestToken })).statusCode, 404);
    assert.equal((await t.request({ method: 'POST', url })).statusCode, 401);
  });

  it('lists pending todos newest first with filters, and done ones on request', async () => {
    const user = await createUser(t.db);
    const token = await createToken(t.db, user);
    const p = await createProjectWithMembers(t, ownerToken, [{ user_id: user.id, access_level: 20 }]);
    const a = await createIssue(t.db, { project_id: p.id, author_id: owner.id, title: 'A' });
    const b = await createIssue(t.db, { project_id: p.id, author_id: owner.id, title: 'B' });
    await createTodos(t.db, [
      { user_id: user.id, author_id: owner.id, project_id: p.id, target_type: 'Issue', target_id: a.id, action: 'assigned' },
      { user_id: user.id, author_id: owner.id, project_id: p.id, target_type: 'Issue', target_id: b.id, action: 'mentioned' },
    ]);
    const note = await t.db.insertInto('notes').values({
      note: '@someone look', noteable_type: 'Issue', noteable_id: b.id, commit_id: null, project_id: p.id, author_id: owner.id,
      system: 0, system_action: null, type: null, discussion_id: 'a'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).returning('id').executeTakeFirstOrThrow();
    await createTodos(t.db, [
      { user_id: user.id, author_id: user.id, project_id: p.id, target_type: 'Issue', target_id: b.id, note_id: note.id, action: 'directly_addressed' },
    ]);

    const all = (await list(token)).json();
    assert.deepEqual(all.map((x: { action_name: string }) => x.action_name), ['directly_addressed', 'mentioned', 'assigned']);
    assert.equal(all[0].body, '@someone look');
    assert.equal(all[0].target_url, `http://kiln.test/${p.path_with_namespace}/-/issues/${b.iid}#note_${note.id}`);
    assert.deepEqual((await list(token, '?action=assigned')).json().map((x: { target: { id: number } }) => x.target.id), [a.id]);
    assert.equal((await list(token, `?author_id=${owner.id}`)).json().length, 2);
    assert.equal((await list(token, `?project_id=${p.id}&type=Issue`)).json().length, 3);
    assert.equal((await list(token, '?type=MergeRequest')).json().length, 0);
    assert.equal((await list(token, `?group_id=${p.namespace_id}`)).json().length, 3);
    assert.equal((await list(token, '?per_page=1')).headers['x-total'], '3');
    assert.equal((await list(token, '?state=closed')).statusCode, 400);
    assert.equal((await list(token, '?action=pinged')).statusCode, 400);

    // One done.
    const done = await t.request({ method: 'POST', url: `/api/v4/todos/${all[2].id}/mark_as_done`, token });
    assert.equal(done.statusCode, 201, done.body);
    assert.equal(done.json().state, 'done');
    assert.equal((await list(token)).json().length, 2);
    assert.deepEqual((await list(token, '?state=done')).json().map((x: { id: number }) => x.id), [all[2].id]);
    // Someone else's todo is as missing as one that does not exist.
    const foreign = await t.request({ method: 'POST', url: `/api/v4/todos/${all[0].id}/mark_as_done`, token: guestToken });
    assert.equal(foreign.statusCode, 404);
    assert.deepEqual(foreign.json(), { message: '404 Not found' });

    // All done.
    const everything = await t.request({ method: 'POST', url: '/api/v4/todos/mark_as_done', token });
    assert.equal(everything.statusCode, 204);
    assert.deepEqual((await list(token)).json(), []);
    assert.equal((await list(token, '?state=done')).json().length, 3);
  });

  it('leaves out todos whose issue the user may no longer read', async () => {
    const user = await createUser(t.db);
    const token = await createToken(t.db, user);
    const p = await createProjectWithMembers(t, ownerToken, [{ user_id: user.id, access_level: 10 }]);
    const open = await createIssue(t.db, { project_id: p.id, author_id: owner.id });
    const secret = await createIssue(t.db, { project_id: p.id, author_id: owner.id, confidential: true });
    const other = await createProjectWithMembers(t, ownerToken);
    const elsewhere = await createIssue(t.db, { project_id: other.id, author_id: owner.id });
    await createTodos(t.db, [open, secret].map((i) => ({
      user_id: user.id, author_id: owner.id, project_id: p.id, target_type: 'Issue', target_id: i.id, action: 'mentioned' as const,
    })));
    await createTodos(t.db, [{ user_id: user.id, author_id: owner.id, project_id: other.id, target_type: 'Issue', target_id: elsewhere.id, action: 'mentioned' }]);
    const shown = (await list(token)).json();
    assert.deepEqual(shown.map((x: { target: { id: number } }) => x.target.id), [open.id]);
    // Adding a todo on the confidential issue is refused as the issue is hidden.
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${p.id}/issues/${secret.iid}/todo`, token })).statusCode, 404);
  });

  it('removes a user’s todos with the user', async () => {
    const user = await createUser(t.db);
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    await createTodos(t.db, [{ user_id: user.id, author_id: owner.id, project_id: project.id, target_type: 'Issue', target_id: issue.id, action: 'assigned' }]);
    await createTodos(t.db, [{ user_id: owner.id, author_id: user.id, project_id: project.id, target_type: 'Issue', target_id: issue.id, action: 'mentioned' }]);
    await t.db.deleteFrom('users').where('id', '=', user.id).execute();
    const left = await t.db.selectFrom('todos').select('id').where((eb) => eb.or([eb('user_id', '=', user.id), eb('author_id', '=', user.id)])).execute();
    assert.deepEqual(left, []);
  });
});
