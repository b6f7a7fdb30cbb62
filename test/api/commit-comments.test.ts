/**
 * Comments on commits (issue 29, item 4; lib/api/commits.rb `comments` of the Service 15.2): on
 * the commit, and on an added or removed line of its diff, read back as CommitNote entities and
 * as the commit's threads; permissions (reading code, commenting) and errors.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

describe('commit comments API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  let first: string;
  let second: string;

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    const commit = async (actions: unknown[], message: string) => {
      const res = await t.request({
        method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
        payload: { branch: 'main', commit_message: message, actions },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    first = await commit([{ action: 'create', file_path: 'README.md', content: 'one\ntwo\nthree\n' }], 'First');
    second = await commit([{ action: 'update', file_path: 'README.md', content: 'one\n2\nthree\nfour\n' }], 'Second');
  });
  after(async () => { await t.close(); });

  const url = (sha: string) => `/api/v4/projects/${project}/repository/commits/${sha}/comments`;
  const post = (token: string | undefined, sha: string, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: url(sha), token, payload });

  it('comments on a commit and lists its comments oldest first', async () => {
    const plain = await post(people.tokens.developer, first, { note: 'Nice start' });
    assert.equal(plain.statusCode, 201, plain.body);
    assert.deepEqual(Object.keys(plain.json()), ['note', 'path', 'line', 'line_type', 'author', 'created_at']);
    assert.equal(plain.json().note, 'Nice start');
    assert.equal(plain.json().path, null);
    assert.equal(plain.json().line, null);
    assert.equal(plain.json().line_type, null);
    assert.equal(plain.json().author.username, people.users.developer.username);
    await post(people.tokens.reporter, first, { note: 'Agreed' });
    const list = await t.request({ url: url(first), token: people.tokens.reporter });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((c: { note: string }) => c.note), ['Nice start', 'Agreed']);
    assert.equal(list.headers['x-total'], '2');
    // By branch name, the tip commit: none of these are on it.
    assert.deepEqual((await t.request({ url: url('main'), token: people.tokens.reporter })).json(), []);
  });

  it('puts a comment on a line of the diff when path, line and line type name one', async () => {
    const added = await post(people.tokens.developer, second, { note: 'why 2?', path: 'README.md', line: 2, line_type: 'new' });
    assert.equal(added.statusCode, 201, added.body);
    assert.deepEqual([added.json().path, added.json().line, added.json().line_type], ['README.md', 2, 'new']);
    const removed = await post(people.tokens.developer, second, { note: 'two was fine', path: 'README.md', line: 2, line_type: 'old' });
    assert.deepEqual([removed.json().path, removed.json().line, removed.json().line_type], ['README.md', null, 'old']);
    // line_type defaults to new.
    const defaulted = await post(people.tokens.developer, second, { note: 'four!', path: 'README.md', line: 4 });
    assert.deepEqual([defaulted.json().path, defaulted.json().line, defaulted.json().line_type], ['README.md', 4, 'new']);
    // An unchanged line, or another file, is no line of the diff: an ordinary comment.
    const context = await post(people.tokens.developer, second, { note: 'one', path: 'README.md', line: 1, line_type: 'new' });
    assert.deepEqual([context.json().path, context.json().line, context.json().line_type], [null, null, null]);
    const otherFile = await post(people.tokens.developer, second, { note: 'x', path: 'NOPE.md', line: 1 });
    assert.equal(otherFile.json().path, null);
    const threads = (await t.request({ url: `/api/v4/projects/${project}/repository/commits/${second}/discussions`, token: people.tokens.developer })).json();
    assert.equal(threads.length, 5);
    assert.equal(threads[0].notes[0].type, 'LegacyDiffNote');
    assert.equal(threads[0].individual_note, false);
    assert.equal(threads[3].individual_note, true);
    const missingLine = await post(people.tokens.developer, second, { note: 'x', path: 'README.md' });
    assert.deepEqual(missingLine.json(), { message: '400 Bad request - "line" not given' });
    const badType = await post(people.tokens.developer, second, { note: 'x', path: 'README.md', line: 1, line_type: 'both' });
    assert.deepEqual(badType.json(), { error: 'line_type does not have a valid value' });
  });

  it('refuses what the caller may not do and bad input', async () => {
    assert.equal((await post(undefined, first, { note: 'anon' })).statusCode, 401);
    assert.deepEqual((await t.request({ url: url(first), token: people.tokens.nonMember })).json(), { message: '404 Project Not Found' });
    // Guests of a private project do not read its code.
    assert.deepEqual((await t.request({ url: url(first), token: people.tokens.guest })).json(), { message: '404 Commit Not Found' });
    const missing = await t.request({ url: url('f'.repeat(40)), token: people.tokens.reporter });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Commit Not Found' });
    const blank = await post(people.tokens.reporter, first, { note: ' ' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: 'Failed to save note {:note=>["can\'t be blank"]}' });
    assert.deepEqual((await post(people.tokens.reporter, first, {})).json(), { message: '400 Bad request - "note" not given' });
  });

  it('lets anyone read the comments of a public project, and signed-in users comment', async () => {
    const publicProject = await createProject(t, people, 'public');
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${publicProject}/repository/commits`, token: people.tokens.owner,
      payload: { branch: 'main', commit_message: 'init', actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }] },
    });
    const sha = res.json().id as string;
    const commentsUrl = `/api/v4/projects/${publicProject}/repository/commits/${sha}/comments`;
    const outsider = await t.request({ method: 'POST', url: commentsUrl, token: people.tokens.nonMember, payload: { note: 'drive-by' } });
    assert.equal(outsider.statusCode, 201, outsider.body);
    const anonymous = await t.request({ url: commentsUrl });
    assert.equal(anonymous.statusCode, 200);
    assert.deepEqual(anonymous.json().map((c: { note: string }) => c.note), ['drive-by']);
  });
});
