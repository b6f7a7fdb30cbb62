/**
 * Award emoji on issues, project snippets and their notes (issue 29, item 4; lib/api/award_emoji.rb
 * of the Service 15.2): names and aliases, one award per user and name, the Service's messages for
 * refused awards, who may read, award and remove, and what happens to a deleted user's awards.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createIssue, createPeople, createProject, createProjectSnippet, type People } from '../helpers/noteables.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('award emoji API', () => {
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

  it('awards, lists, reads and removes an emoji on an issue', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/award_emoji`;
    const given = await post(people.tokens.guest, base, { name: 'thumbsup' });
    assert.equal(given.statusCode, 201, given.body);
    const award = given.json();
    assert.deepEqual(Object.keys(award), ['id', 'name', 'user', 'created_at', 'updated_at', 'awardable_id', 'awardable_type']);
    assert.equal(award.name, 'thumbsup');
    assert.equal(award.awardable_id, issue.id);
    assert.equal(award.awardable_type, 'Issue');
    assert.equal(award.user.username, people.users.guest.username);

    // An alias stands for its emoji's name.
    const alias = await post(people.tokens.reporter, base, { name: '+1' });
    assert.equal(alias.statusCode, 201, alias.body);
    assert.equal(alias.json().name, 'thumbsup');

    const list = await t.request({ url: base, token: people.tokens.developer });
    assert.deepEqual(list.json().map((a: { id: number }) => a.id), [award.id, alias.json().id]);
    assert.equal(list.headers['x-total'], '2');
    const one = await t.request({ url: `${base}/${award.id}`, token: people.tokens.developer });
    assert.equal(one.json().id, award.id);
    assert.deepEqual((await t.request({ url: `${base}/999999`, token: people.tokens.developer })).json(), { message: '404 Not found' });

    const other = await t.request({ method: 'DELETE', url: `${base}/${award.id}`, token: people.tokens.maintainer });
    assert.equal(other.statusCode, 401);
    assert.deepEqual(other.json(), { message: '401 Unauthorized' });
    assert.equal((await t.request({ method: 'DELETE', url: `${base}/${award.id}`, token: people.tokens.guest })).statusCode, 204);
    assert.equal((await t.request({ method: 'DELETE', url: `${base}/${alias.json().id}`, token: ROOT_TOKEN })).statusCode, 204);
    assert.deepEqual((await t.request({ url: base, token: people.tokens.developer })).json(), []);
  });

  it('refuses a name that is no emoji and one already given, in the Service words', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const base = `/api/v4/projects/${project}/issues/${issue.iid}/award_emoji`;
    const invalid = await post(people.tokens.guest, base, { name: 'no_such_emoji_here' });
    assert.equal(invalid.statusCode, 404);
    assert.deepEqual(invalid.json(), { message: '404 Award Emoji Name is not a valid emoji name Not Found' });
    assert.equal((await post(people.tokens.guest, base, { name: 'tada' })).statusCode, 201);
    const again = await post(people.tokens.guest, base, { name: 'tada' });
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { message: '404 Award Emoji Name has already been taken Not Found' });
    // Someone else may give the same emoji.
    assert.equal((await post(people.tokens.reporter, base, { name: 'tada' })).statusCode, 201);
    const missing = await post(people.tokens.guest, base, {});
    assert.deepEqual(missing.json(), { message: '400 Bad request - "name" not given' });
  });

  it('answers 404 for what the caller may not read and 401 without credentials', async () => {
    const confidential = await createIssue(t, project, people.users.owner.id, { confidential: 1 });
    const base = `/api/v4/projects/${project}/issues/${confidential.iid}/award_emoji`;
    assert.equal((await t.request({ url: base })).statusCode, 401);
    const guest = await t.request({ url: base, token: people.tokens.guest });
    assert.equal(guest.statusCode, 404);
    assert.deepEqual(guest.json(), { message: '404 Award Emoji Not Found' });
    assert.deepEqual((await post(people.tokens.guest, base, { name: 'smile' })).json(), { message: '404 Award Emoji Not Found' });
    assert.equal((await post(people.tokens.reporter, base, { name: 'smile' })).statusCode, 201);
    const missing = await t.request({ url: `/api/v4/projects/${project}/issues/99999/award_emoji`, token: people.tokens.guest });
    assert.deepEqual(missing.json(), { message: '404 Not found' });
    assert.deepEqual((await t.request({ url: base, token: people.tokens.nonMember })).json(), { message: '404 Project Not Found' });
  });

  it('lets non-members of a public project award, except on a locked issue', async () => {
    const publicProject = await createProject(t, people, 'public');
    const open = await createIssue(t, publicProject, people.users.owner.id);
    const locked = await createIssue(t, publicProject, people.users.owner.id, { discussion_locked: 1 });
    const url = (iid: number) => `/api/v4/projects/${publicProject}/issues/${iid}/award_emoji`;
    assert.equal((await post(people.tokens.nonMember, url(open.iid), { name: 'heart' })).statusCode, 201);
    assert.deepEqual((await post(people.tokens.nonMember, url(locked.iid), { name: 'heart' })).json(), { message: '404 Award Emoji Not Found' });
    assert.equal((await post(people.tokens.guest, url(locked.iid), { name: 'heart' })).statusCode, 201);
  });

  it('awards emoji on notes of issues and on project snippets and their notes', async () => {
    const issue = await createIssue(t, project, people.users.owner.id);
    const note = (await post(people.tokens.guest, `/api/v4/projects/${project}/issues/${issue.iid}/notes`, { body: 'hi' })).json();
    const noteBase = `/api/v4/projects/${project}/issues/${issue.iid}/notes/${note.id}/award_emoji`;
    const onNote = await post(people.tokens.reporter, noteBase, { name: 'rocket' });
    assert.equal(onNote.statusCode, 201, onNote.body);
    assert.equal(onNote.json().awardable_type, 'Note');
    assert.equal(onNote.json().awardable_id, note.id);
    assert.equal((await t.request({ url: noteBase, token: people.tokens.guest })).json().length, 1);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${project}/issues/${issue.iid}/notes/999999/award_emoji`, token: people.tokens.guest })).json(),
      { message: '404 Not found' });
    // Deleting the note takes its awards along.
    await t.request({ method: 'DELETE', url: `/api/v4/projects/${project}/issues/${issue.iid}/notes/${note.id}`, token: people.tokens.guest });
    const left = await t.db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'Note').where('awardable_id', '=', note.id).execute();
    assert.deepEqual(left, []);
    // An internal note is not there for guests.
    const internal = (await post(people.tokens.reporter, `/api/v4/projects/${project}/issues/${issue.iid}/notes`, { body: 's', internal: true })).json();
    const hidden = await t.request({ url: `/api/v4/projects/${project}/issues/${issue.iid}/notes/${internal.id}/award_emoji`, token: people.tokens.guest });
    assert.equal(hidden.statusCode, 404);

    const snippet = await createProjectSnippet(t, project, people.users.owner.id, 0);
    const snippetBase = `/api/v4/projects/${project}/snippets/${snippet.id}/award_emoji`;
    const onSnippet = await post(people.tokens.guest, snippetBase, { name: 'eyes' });
    assert.equal(onSnippet.statusCode, 201, onSnippet.body);
    assert.equal(onSnippet.json().awardable_type, 'Snippet');
    const snippetNote = (await post(people.tokens.guest, `/api/v4/projects/${project}/snippets/${snippet.id}/notes`, { body: 'n' })).json();
    const onSnippetNote = await post(people.tokens.guest, `/api/v4/projects/${project}/snippets/${snippet.id}/notes/${snippetNote.id}/award_emoji`, { name: 'eyes' });
    assert.equal(onSnippetNote.statusCode, 201, onSnippetNote.body);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${project}/snippets/999999/award_emoji`, token: people.tokens.guest })).json(),
      { message: '404 Not found' });
  });

  it("moves a deleted user's awards and notes to the ghost user", async () => {
    const leaving = await createUser(t.db);
    const leavingToken = await createToken(t.db, leaving);
    const publicProject = await createProject(t, people, 'public');
    const issue = await createIssue(t, publicProject, people.users.owner.id);
    const note = (await post(leavingToken, `/api/v4/projects/${publicProject}/issues/${issue.iid}/notes`, { body: 'bye' })).json();
    const award = (await post(leavingToken, `/api/v4/projects/${publicProject}/issues/${issue.iid}/award_emoji`, { name: 'wave' })).json();
    const del = await t.request({ method: 'DELETE', url: `/api/v4/users/${leaving.id}`, token: ROOT_TOKEN });
    assert.equal(del.statusCode, 204, del.body);
    const ghost = await t.db.selectFrom('users').select('id').where('user_type', '=', 5).executeTakeFirstOrThrow();
    const movedNote = await t.db.selectFrom('notes').select('author_id').where('id', '=', note.id).executeTakeFirstOrThrow();
    assert.equal(movedNote.author_id, ghost.id);
    const movedAward = await t.db.selectFrom('award_emoji').select('user_id').where('id', '=', award.id).executeTakeFirstOrThrow();
    assert.equal(movedAward.user_id, ghost.id);

    // The ghost user already gave that emoji there: one award stays (the unique index), the deletion goes through.
    const second = await createUser(t.db);
    const secondToken = await createToken(t.db, second);
    const duplicate = (await post(secondToken, `/api/v4/projects/${publicProject}/issues/${issue.iid}/award_emoji`, { name: 'wave' })).json();
    const kept = (await post(secondToken, `/api/v4/projects/${publicProject}/issues/${issue.iid}/award_emoji`, { name: 'heart' })).json();
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${second.id}`, token: ROOT_TOKEN })).statusCode, 204);
    const awards = await t.db.selectFrom('award_emoji').select(['id', 'name', 'user_id'])
      .where('awardable_type', '=', 'Issue').where('awardable_id', '=', issue.id).orderBy('id').execute();
    assert.deepEqual(awards, [
      { id: award.id, name: 'wave', user_id: ghost.id }, { id: kept.id, name: 'heart', user_id: ghost.id },
    ]);
    assert.ok(!awards.some((a) => a.id === duplicate.id));
  });
});
