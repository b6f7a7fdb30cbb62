/**
 * Notes of issues and project snippets (issue 29, item 4; lib/api/notes.rb of the Service 15.2):
 * the notes API at the HTTP boundary with its permissions (anonymous, non-member, guest,
 * reporter, maintainer, author; confidential issues, internal notes, locked discussions), its
 * errors, its order and filters, and what a note does besides (event, todos, updated_at).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createIssue, createPeople, createProject, createProjectSnippet, type People } from '../helpers/noteables.ts';

describe('notes API', () => {
  let t: TestApp;
  let people: People;
  let project: number;

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
  });
  after(async () => { await t.close(); });

  const notesUrl = (iid: number, rest = '') => `/api/v4/projects/${project}/issues/${iid}/notes${rest}`;
  const post = (token: string | undefined, url: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url, token, payload });

  it('creates, reads, lists, changes and deletes a note of an issue', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const created = await post(people.tokens.guest, notesUrl(issue.iid), { body: 'First!' });
    assert.equal(created.statusCode, 201, created.body);
    const note = created.json();
    assert.deepEqual(Object.keys(note), [
      'id', 'type', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type',
      'project_id', 'resolvable', 'confidential', 'internal', 'noteable_iid', 'commands_changes',
    ]);
    assert.equal(note.body, 'First!');
    assert.equal(note.type, null);
    assert.equal(note.system, false);
    assert.equal(note.noteable_id, issue.id);
    assert.equal(note.noteable_type, 'Issue');
    assert.equal(note.noteable_iid, issue.iid);
    assert.equal(note.project_id, project);
    assert.equal(note.author.username, people.users.guest.username);
    assert.deepEqual(note.commands_changes, {});
    assert.equal(note.internal, false);

    const one = await t.request({ url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.reporter });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().id, note.id);

    const list = await t.request({ url: notesUrl(issue.iid), token: people.tokens.reporter });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((n: { id: number }) => n.id), [note.id]);
    assert.equal(list.headers['x-total'], '1');

    const changed = await t.request({ method: 'PUT', url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.guest, payload: { body: 'Edited' } });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json().body, 'Edited');

    const del = await t.request({ method: 'DELETE', url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.guest });
    assert.equal(del.statusCode, 204);
    const gone = await t.request({ url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.guest });
    assert.equal(gone.statusCode, 404);
    assert.deepEqual(gone.json(), { message: '404 Not found' });
  });

  it('lists in the order and with the filter asked for', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const ids: number[] = [];
    for (const body of ['one', 'two', 'three']) ids.push((await post(people.tokens.owner, notesUrl(issue.iid), { body })).json().id);
    await t.db.insertInto('notes').values({
      note: 'closed', noteable_type: 'Issue', noteable_id: issue.id, commit_id: null, project_id: project, author_id: people.users.owner.id,
      system: 1, system_action: 'closed', type: null, discussion_id: 'f'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
    }).execute();
    const get = async (query: string) => (await t.request({ url: `${notesUrl(issue.iid)}?${query}`, token: people.tokens.owner })).json()
      .map((n: { body: string }) => n.body);
    assert.deepEqual(await get(''), ['closed', 'three', 'two', 'one']);
    assert.deepEqual(await get('sort=asc'), ['one', 'two', 'three', 'closed']);
    assert.deepEqual(await get('sort=asc&activity_filter=only_comments'), ['one', 'two', 'three']);
    assert.deepEqual(await get('activity_filter=only_activity'), ['closed']);
    await t.request({ method: 'PUT', url: notesUrl(issue.iid, `/${ids[0]}`), token: people.tokens.owner, payload: { body: 'one again' } });
    assert.deepEqual(await get('order_by=updated_at&sort=desc&activity_filter=only_comments'), ['one again', 'three', 'two']);
    assert.deepEqual(await get('per_page=2&sort=asc'), ['one again', 'two']);
    const bad = await t.request({ url: `${notesUrl(issue.iid)}?order_by=title`, token: people.tokens.owner });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'order_by does not have a valid value' });
  });

  it('answers 401 without credentials and 404 to those who may not read', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    assert.equal((await t.request({ url: notesUrl(issue.iid) })).statusCode, 401);
    const outsider = await t.request({ url: notesUrl(issue.iid), token: people.tokens.nonMember });
    assert.equal(outsider.statusCode, 404);
    assert.deepEqual(outsider.json(), { message: '404 Project Not Found' });
    const missing = await t.request({ url: notesUrl(9999), token: people.tokens.guest });
    assert.deepEqual(missing.json(), { message: '404 Issue Not Found' });
  });

  it('hides a confidential issue from guests who are neither its author nor assignee', async () => {
    const issue = await createIssue(t, project, people.users.reporter.id, { confidential: 1 });
    const note = (await post(people.tokens.reporter, notesUrl(issue.iid), { body: 'secret' })).json();
    for (const url of [notesUrl(issue.iid), notesUrl(issue.iid, `/${note.id}`)]) {
      const res = await t.request({ url, token: people.tokens.guest });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { message: '404 Issue Not Found' });
    }
    const write = await post(people.tokens.guest, notesUrl(issue.iid), { body: 'me too' });
    assert.deepEqual(write.json(), { message: '404 Issue Not Found' });
    assert.equal((await t.request({ url: notesUrl(issue.iid), token: people.tokens.reporter })).json().length, 1);
    // Its author reads it, as a guest would not.
    const own = await createIssue(t, project, people.users.guest.id, { confidential: 1 });
    assert.equal((await post(people.tokens.guest, notesUrl(own.iid), { body: 'mine' })).statusCode, 201);
  });

  it('shows internal notes to Reporters and up only, and makes them only for Reporters and up', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const internal = await post(people.tokens.reporter, notesUrl(issue.iid), { body: 'between us', internal: true });
    assert.equal(internal.statusCode, 201, internal.body);
    assert.equal(internal.json().internal, true);
    assert.equal(internal.json().confidential, true);
    const legacy = await post(people.tokens.reporter, notesUrl(issue.iid), { body: 'old name', confidential: true });
    assert.equal(legacy.json().internal, true);
    await post(people.tokens.guest, notesUrl(issue.iid), { body: 'public' });

    const guestList = (await t.request({ url: notesUrl(issue.iid), token: people.tokens.guest })).json();
    assert.deepEqual(guestList.map((n: { body: string }) => n.body), ['public']);
    const reporterList = (await t.request({ url: notesUrl(issue.iid), token: people.tokens.reporter })).json();
    assert.equal(reporterList.length, 3);
    const hidden = await t.request({ url: notesUrl(issue.iid, `/${internal.json().id}`), token: people.tokens.guest });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Note Not Found' });

    // Notes::BuildService: a guest's note asked to be internal is an ordinary one.
    const downgraded = await post(people.tokens.guest, notesUrl(issue.iid), { body: 'psst', internal: true });
    assert.equal(downgraded.statusCode, 201);
    assert.equal(downgraded.json().internal, false);
  });

  it('takes comments on a locked issue from project members only (IssuablePolicy: locked & ~is_project_member)', async () => {
    const issue = await createIssue(t, project, people.users.guest.id, { discussion_locked: 1 });
    assert.equal((await post(people.tokens.guest, notesUrl(issue.iid), { body: 'a member' })).statusCode, 201);
    assert.equal((await post(people.tokens.reporter, notesUrl(issue.iid), { body: 'ok' })).statusCode, 201);
  });

  it('lets the author or a Maintainer change and delete a note, nobody else', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const note = (await post(people.tokens.developer, notesUrl(issue.iid), { body: 'dev says' })).json();
    const put = (token: string) => t.request({ method: 'PUT', url: notesUrl(issue.iid, `/${note.id}`), token, payload: { body: 'x' } });
    assert.equal((await put(people.tokens.reporter)).statusCode, 403);
    assert.equal((await put(people.tokens.guest)).statusCode, 403);
    assert.equal((await put(people.tokens.maintainer)).statusCode, 200);
    const del = (token: string) => t.request({ method: 'DELETE', url: notesUrl(issue.iid, `/${note.id}`), token });
    assert.equal((await del(people.tokens.reporter)).statusCode, 403);
    // destroy_conditionally!: a note changed after If-Unmodified-Since stays.
    const stale = await t.request({
      method: 'DELETE', url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.maintainer,
      headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
    });
    assert.equal(stale.statusCode, 412);
    assert.equal((await del(people.tokens.maintainer)).statusCode, 204);
  });

  it('refuses bad text in the Service words', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const missing = await post(people.tokens.owner, notesUrl(issue.iid), {});
    assert.deepEqual(missing.json(), { message: '400 Bad request - "body" not given' });
    const blank = await post(people.tokens.owner, notesUrl(issue.iid), { body: '  ' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: '400 Bad request - Note {:note=>["can\'t be blank"]}' });
    const long = await post(people.tokens.owner, notesUrl(issue.iid), { body: 'x'.repeat(1_000_001) });
    assert.deepEqual(long.json(), { message: '400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}' });
    assert.equal((await post(people.tokens.owner, notesUrl(issue.iid), { body: 'x'.repeat(1_000_000) })).statusCode, 201);
    const note = (await post(people.tokens.owner, notesUrl(issue.iid), { body: 'ok' })).json();
    const emptyEdit = await t.request({ method: 'PUT', url: notesUrl(issue.iid, `/${note.id}`), token: people.tokens.owner, payload: { body: '' } });
    assert.deepEqual(emptyEdit.json(), { error: 'body is empty' });
    const system = await t.db.insertInto('notes').values({
      note: 'closed', noteable_type: 'Issue', noteable_id: issue.id, commit_id: null, project_id: project, author_id: people.users.owner.id,
      system: 1, system_action: 'closed', type: null, discussion_id: 'e'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
    }).returning('id').executeTakeFirstOrThrow();
    const editSystem = await t.request({ method: 'PUT', url: notesUrl(issue.iid, `/${system.id}`), token: people.tokens.owner, payload: { body: 'y' } });
    assert.equal(editSystem.statusCode, 403);
  });

  it('takes a creation time from owners and administrators only', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const when = '2020-01-02T03:04:05.000Z';
    const owned = (await post(people.tokens.owner, notesUrl(issue.iid), { body: 'back then', created_at: when })).json();
    assert.equal(owned.created_at, when);
    assert.equal(owned.updated_at, when);
    const dev = (await post(people.tokens.developer, notesUrl(issue.iid), { body: 'now', created_at: when })).json();
    assert.notEqual(dev.created_at, when);
  });

  it('records a commented event, raises todos for mentions and touches the issue', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const confidential = await createIssue(t, project, people.users.owner.id, { confidential: 1 });
    const { reporter, developer, nonMember, guest } = people.users;
    const body = `@${reporter.username} please look, and @${developer.username} and @${nonMember.username} too`;
    const note = (await post(people.tokens.owner, notesUrl(issue.iid), { body })).json();
    const todos = await t.db.selectFrom('todos').selectAll().where('note_id', '=', note.id).orderBy('user_id').execute();
    assert.deepEqual(todos.map((x) => [x.user_id, x.action, x.target_type, x.target_id]), [
      [reporter.id, 7, 'Issue', issue.id], [developer.id, 2, 'Issue', issue.id],
    ].sort((a, b) => (a[0] as number) - (b[0] as number)));
    const event = await t.db.selectFrom('events').selectAll().where('target_type', '=', 'Note').where('target_id', '=', note.id).executeTakeFirst();
    assert.equal(event?.action, 'commented');
    assert.equal(event?.author_id, people.users.owner.id);
    const touched = await t.db.selectFrom('issues').select('updated_at').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.ok(touched.updated_at >= note.created_at);
    // A guest cannot read a confidential issue: no todo for them.
    const secret = (await post(people.tokens.owner, notesUrl(confidential.iid), { body: `@${guest.username} @${reporter.username}` })).json();
    const secretTodos = await t.db.selectFrom('todos').select('user_id').where('note_id', '=', secret.id).execute();
    assert.deepEqual(secretTodos.map((x) => x.user_id), [reporter.id]);
  });

  it('serves the notes of project snippets by the snippet policy', async () => {
    const privateSnippet = await createProjectSnippet(t, project, people.users.developer.id, 0);
    const url = `/api/v4/projects/${project}/snippets/${privateSnippet.id}/notes`;
    const created = await post(people.tokens.guest, url, { body: 'nice snippet' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().noteable_type, 'Snippet');
    assert.equal(created.json().noteable_iid, null);
    assert.equal((await t.request({ url, token: people.tokens.developer })).json().length, 1);
    // Snippets have no internal notes: the flag is dropped.
    const internal = await post(people.tokens.owner, url, { body: 'x', internal: true });
    assert.equal(internal.statusCode, 201);
    assert.equal(internal.json().internal, false);

    const publicProject = await createProject(t, people, 'public');
    const publicSnippet = await createProjectSnippet(t, publicProject, people.users.owner.id, 20);
    const hiddenSnippet = await createProjectSnippet(t, publicProject, people.users.owner.id, 0);
    const pubUrl = (id: number) => `/api/v4/projects/${publicProject}/snippets/${id}/notes`;
    const outsiderPost = await post(people.tokens.nonMember, pubUrl(publicSnippet.id), { body: 'drive-by' });
    assert.equal(outsiderPost.statusCode, 201, outsiderPost.body);
    const hidden = await t.request({ url: pubUrl(hiddenSnippet.id), token: people.tokens.nonMember });
    assert.deepEqual(hidden.json(), { message: '404 Snippet Not Found' });
    // A snippet of another project is no snippet here.
    const elsewhere = await t.request({ url: pubUrl(privateSnippet.id), token: people.tokens.owner });
    assert.deepEqual(elsewhere.json(), { message: '404 Snippet Not Found' });
    await t.db.updateTable('projects').set({ snippets_access_level: 0 }).where('id', '=', publicProject).execute();
    const off = await t.request({ url: pubUrl(publicSnippet.id), token: people.tokens.owner });
    assert.equal(off.statusCode, 404);
  });
});
