/**
 * Threads of issues, project snippets and commits (issue 29, item 4; lib/api/discussions.rb of
 * the Service 15.2): starting, replying, reading, changing and deleting, individual notes as
 * one-note threads, replies that turn an individual note into a thread, and the permissions and
 * errors of the notes API.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createIssue, createPeople, createProject, createProjectSnippet, type People } from '../helpers/noteables.ts';

describe('discussions API', () => {
  let t: TestApp;
  let people: People;
  let project: number;

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
  });
  after(async () => { await t.close(); });

  const post = (token: string | undefined, url: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url, token, payload });

  it('starts a thread, replies to it and reads it back', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/discussions`;
    const started = await post(people.tokens.guest, base, { body: 'Shall we?' });
    assert.equal(started.statusCode, 201, started.body);
    const thread = started.json();
    assert.match(thread.id, /^[0-9a-f]{40}$/);
    assert.equal(thread.individual_note, false);
    assert.equal(thread.notes.length, 1);
    assert.equal(thread.notes[0].type, 'DiscussionNote');
    assert.equal(thread.notes[0].body, 'Shall we?');

    const reply = await post(people.tokens.reporter, `${base}/${thread.id}/notes`, { body: 'We shall.' });
    assert.equal(reply.statusCode, 201, reply.body);
    assert.equal(reply.json().type, 'DiscussionNote');

    // One note of the thread (python-gitlab's discussion.notes.get); a note of another thread is not found there.
    const noteOf = await t.request({ url: `${base}/${thread.id}/notes/${reply.json().id}`, token: people.tokens.guest });
    assert.deepEqual([noteOf.statusCode, noteOf.json().body], [200, 'We shall.']);
    const one = await t.request({ url: `${base}/${thread.id}`, token: people.tokens.guest });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json().notes.map((n: { body: string }) => n.body), ['Shall we?', 'We shall.']);

    // A note made through the notes API is a thread of its own, an individual note.
    const single = await post(people.tokens.guest, `/api/v4/projects/${project}/issues/${issue.iid}/notes`, { body: 'aside' });
    const list = await t.request({ url: base, token: people.tokens.guest });
    assert.equal(list.statusCode, 200);
    const threads = list.json();
    assert.deepEqual(threads.map((d: { individual_note: boolean; notes: unknown[] }) => [d.individual_note, d.notes.length]), [[false, 2], [true, 1]]);
    assert.equal(threads[1].notes[0].id, single.json().id);
    assert.equal(threads[1].notes[0].type, null);
    assert.equal(list.headers['x-total'], '2');

    // Replying to it on an issue makes it a thread.
    const individualId = threads[1].id;
    const converted = await post(people.tokens.owner, `${base}/${individualId}/notes`, { body: 'on that' });
    assert.equal(converted.statusCode, 201, converted.body);
    const after = (await t.request({ url: `${base}/${individualId}`, token: people.tokens.guest })).json();
    assert.equal(after.individual_note, false);
    assert.deepEqual(after.notes.map((n: { type: string }) => n.type), ['DiscussionNote', 'DiscussionNote']);

    const paged = await t.request({ url: `${base}?per_page=1&page=2`, token: people.tokens.guest });
    assert.equal(paged.json()[0].id, individualId);
  });

  it('changes and deletes a thread note with the notes API permissions', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/discussions`;
    const thread = (await post(people.tokens.developer, base, { body: 'draft' })).json();
    const noteUrl = `${base}/${thread.id}/notes/${thread.notes[0].id}`;
    const put = (token: string, payload: Record<string, unknown>) => t.request({ method: 'PUT', url: noteUrl, token, payload });
    assert.equal((await put(people.tokens.reporter, { body: 'hijack' })).statusCode, 403);
    const edited = await put(people.tokens.developer, { body: 'final' });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.json().body, 'final');
    const neither = await put(people.tokens.developer, {});
    assert.deepEqual(neither.json(), { error: 'body, resolved are missing, exactly one parameter must be provided' });
    const both = await put(people.tokens.developer, { body: 'x', resolved: true });
    assert.equal(both.statusCode, 400);
    const resolve = await put(people.tokens.developer, { resolved: true });
    assert.deepEqual(resolve.json(), { message: '400 Bad request - Note is not resolvable' });
    assert.equal((await t.request({ method: 'DELETE', url: noteUrl, token: people.tokens.reporter })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: noteUrl, token: people.tokens.developer })).statusCode, 204);
    const gone = await t.request({ url: `${base}/${thread.id}`, token: people.tokens.developer });
    assert.equal(gone.statusCode, 404);
    assert.deepEqual(gone.json(), { message: '404 Discussion Not Found' });
  });

  it('refuses what the caller may not do and bad input', async () => {
    const issue = await createIssue(t, project, people.users.owner.id, { discussion_locked: 1 });
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/discussions`;
    assert.equal((await t.request({ url: base })).statusCode, 401);
    assert.deepEqual((await t.request({ url: base, token: people.tokens.nonMember })).json(), { message: '404 Project Not Found' });
    // Members may still comment on a locked issue (test/domain/issues/issue-policy.test.ts: others may not).
    assert.equal((await post(people.tokens.guest, base, { body: 'a member' })).statusCode, 201);
    const blank = await post(people.tokens.owner, base, { body: '' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: { note: ["can't be blank"] } });
    const unknown = await t.request({ url: `${base}/${'a'.repeat(40)}`, token: people.tokens.owner });
    assert.deepEqual(unknown.json(), { message: '404 Discussion Not Found' });
    const badIid = await t.request({ url: `/api/v4/projects/${project}/issues/abc/discussions`, token: people.tokens.owner });
    assert.equal(badIid.statusCode, 400);
    assert.deepEqual(badIid.json(), { error: 'noteable_id is invalid' });
    const confidential = await createIssue(t, project, people.users.owner.id, { confidential: 1 });
    const hidden = await t.request({ url: `/api/v4/projects/${project}/issues/${confidential.iid}/discussions`, token: people.tokens.guest });
    assert.deepEqual(hidden.json(), { message: '404 Issue Not Found' });
  });

  it('keeps internal threads from guests', async () => {
    const issue = await createIssue(t, project, people.users.guest.id);
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/discussions`;
    const internal = (await post(people.tokens.reporter, base, { body: 'staff only', internal: true })).json();
    assert.equal(internal.notes[0].internal, true);
    const reply = (await post(people.tokens.maintainer, `${base}/${internal.id}/notes`, { body: 'indeed' })).json();
    assert.equal(reply.internal, true);
    await post(people.tokens.guest, base, { body: 'hello' });
    assert.equal((await t.request({ url: base, token: people.tokens.guest })).json().length, 1);
    assert.equal((await t.request({ url: base, token: people.tokens.reporter })).json().length, 2);
    const hidden = await t.request({ url: `${base}/${internal.id}`, token: people.tokens.guest });
    assert.deepEqual(hidden.json(), { message: '404 Discussion Not Found' });
    const hiddenNote = await t.request({ url: `${base}/${internal.id}/notes/${reply.id}`, token: people.tokens.guest });
    assert.equal(hiddenNote.statusCode, 404);
    const shown = await t.request({ url: `${base}/${internal.id}/notes/${reply.id}`, token: people.tokens.reporter });
    assert.equal(shown.json().body, 'indeed');
  });

  it('serves threads of project snippets, where individual notes take no replies', async () => {
    const snippet = await createProjectSnippet(t, project, people.users.owner.id, 0);
    const base = `/api/v4/projects/${project}/snippets/${snippet.id}/discussions`;
    const thread = await post(people.tokens.guest, base, { body: 'on the snippet' });
    assert.equal(thread.statusCode, 201, thread.body);
    assert.equal(thread.json().notes[0].noteable_type, 'Snippet');
    const single = await post(people.tokens.guest, `/api/v4/projects/${project}/snippets/${snippet.id}/notes`, { body: 'single' });
    const threads = (await t.request({ url: base, token: people.tokens.guest })).json();
    const individual = threads.find((d: { individual_note: boolean }) => d.individual_note);
    assert.equal(individual.notes[0].id, single.json().id);
    const refused = await post(people.tokens.guest, `${base}/${individual.id}/notes`, { body: 'reply' });
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(refused.json(), { message: '400 Bad request - Discussion can not be replied to.' });
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${project}/snippets/999999/discussions`, token: people.tokens.guest })).json(),
      { message: '404 Snippet Not Found' });
  });

  it('serves threads of commits of the repository', async () => {
    const commit = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch: 'main', commit_message: 'First', actions: [{ action: 'create', file_path: 'README.md', content: 'hi\n' }] },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    const sha = commit.json().id as string;
    const base = `/api/v4/projects/${project}/repository/commits/${sha}/discussions`;
    const started = await post(people.tokens.developer, base, { body: 'about this commit' });
    assert.equal(started.statusCode, 201, started.body);
    const note = started.json().notes[0];
    assert.equal(note.noteable_type, 'Commit');
    assert.equal(note.noteable_id, null);
    assert.equal(note.noteable_iid, null);
    const reply = await post(people.tokens.reporter, `${base}/${started.json().id}/notes`, { body: 'agreed' });
    assert.equal(reply.statusCode, 201, reply.body);
    // Guests of a private project do not read its code (read_commit is download_code).
    const guest = await t.request({ url: base, token: people.tokens.guest });
    assert.deepEqual(guest.json(), { message: '404 Commit Not Found' });
    // The branch names the same commit.
    const byRef = (await t.request({ url: `/api/v4/projects/${project}/repository/commits/main/discussions`, token: people.tokens.reporter })).json();
    assert.equal(byRef.length, 1);
    assert.equal(byRef[0].notes.length, 2);
    const missing = await t.request({ url: `/api/v4/projects/${project}/repository/commits/${'0'.repeat(40)}/discussions`, token: people.tokens.reporter });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Commit Not Found' });
    const internal = await post(people.tokens.owner, base, { body: 'x', internal: true });
    assert.equal(internal.statusCode, 201);
    assert.equal(internal.json().notes[0].internal, false);
  });
});
