/**
 * Cherry-pick and revert (issue 30, item 4; lib/api/commits.rb of the Service 15.2, and
 * python-gitlab's test_cherry_pick_commit / test_revert_commit): real commits on the branch with
 * the Service's messages and authors, dry runs, conflicts and changes already made (400 with
 * error_code), permissions, and the push's side effects (events) through afterRefUpdate.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

describe('cherry-pick and revert API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  const shas: Record<string, string> = {};

  const commit = async (name: string, actions: unknown[], branch = 'main', extra: Record<string, unknown> = {}) => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch, commit_message: name, actions, author_name: 'Ada', author_email: 'ada@example.com', ...extra },
    });
    assert.equal(res.statusCode, 201, res.body);
    shas[name] = res.json().id as string;
    return res.json();
  };
  const post = (what: string, sha: string, payload: Record<string, unknown>, token = people.tokens.developer) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${project}/repository/commits/${sha}/${what}`, token, payload });
  const file = async (ref: string, path: string) => {
    const res = await t.request({
      url: `/api/v4/projects/${project}/repository/files/${encodeURIComponent(path)}/raw?ref=${ref}`, token: people.tokens.developer,
    });
    return res.statusCode === 200 ? res.body : null;
  };

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    await commit('first', [{ action: 'create', file_path: 'a.txt', content: '1\n2\n3\n' }]);
    await commit('second', [{ action: 'create', file_path: 'b.txt', content: 'b\n' }]);
    await commit('third', [{ action: 'update', file_path: 'a.txt', content: '1\ntwo\n3\n' }]);
    const branch = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/branches`, token: people.tokens.owner,
      payload: { branch: 'test', ref: shas.first },
    });
    assert.equal(branch.statusCode, 201, branch.body);
  });
  after(async () => { await t.close(); });

  it('cherry-picks a commit onto a branch, keeping its author, then refuses it as empty', async () => {
    const dry = await post('cherry_pick', shas.second, { branch: 'test', dry_run: true });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(dry.json(), { dry_run: 'success' });
    assert.equal(await file('test', 'b.txt'), null);

    const res = await post('cherry_pick', shas.second, { branch: 'test' });
    assert.equal(res.statusCode, 201, res.body);
    const picked = res.json();
    // Commit#cherry_pick_message: the message as it is, a blank line, the note (python-gitlab checks the start).
    const original = (await t.request({ url: `/api/v4/projects/${project}/repository/commits/${shas.second}`, token: people.tokens.developer })).json();
    assert.equal(picked.message, `${original.message}\n\n(cherry picked from commit ${shas.second})`);
    assert.deepEqual(picked.parent_ids, [shas.first]);
    assert.equal(picked.author_name, 'Ada');
    assert.equal(picked.author_email, 'ada@example.com');
    assert.equal(picked.committer_name, people.users.developer.name);
    assert.equal(await file('test', 'b.txt'), 'b\n');
    const branch = await t.request({ url: `/api/v4/projects/${project}/repository/branches/test`, token: people.tokens.developer });
    assert.equal(branch.json().commit.id, picked.id);

    const again = await post('cherry_pick', shas.second, { branch: 'test' });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), {
      message: 'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, '
        + 'or a more recent commit may have updated some of its content.',
      error_code: 'empty',
    });
    const againDry = await post('cherry_pick', shas.second, { branch: 'test', dry_run: true });
    assert.equal(againDry.json().dry_run, 'error');
    assert.equal(againDry.json().error_code, 'empty');

    const custom = await post('cherry_pick', shas.third, { branch: 'test', message: 'Picked by hand' });
    assert.equal(custom.statusCode, 201, custom.body);
    assert.equal(custom.json().message, 'Picked by hand');
    assert.equal(await file('test', 'a.txt'), '1\ntwo\n3\n');
  });

  it('reverts a commit on a branch, then refuses the same revert as empty', async () => {
    // main is protected (default_branch_protection 2): a Developer may not write to it, a Maintainer may.
    const developer = await post('revert', shas.third, { branch: 'main' });
    assert.deepEqual(developer.json(), { message: '403 Forbidden - You are not allowed to push into this branch' });
    const res = await post('revert', shas.third, { branch: 'main' }, people.tokens.maintainer);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().message, `Revert "third"\n\nThis reverts commit ${shas.third}`);
    assert.equal(res.json().author_name, people.users.maintainer.name);
    assert.equal(await file('main', 'a.txt'), '1\n2\n3\n');
    const again = await post('revert', shas.third, { branch: 'main' }, people.tokens.maintainer);
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().error_code, 'empty');
    assert.match(again.json().message, /^Sorry, we cannot revert this commit automatically\. This commit may already have been reverted, /);
    // The revert was pushed to main like any write: its push event is recorded.
    for (let i = 0; i < 50; i++) {
      const events = (await t.request({ url: `/api/v4/projects/${project}/events`, token: people.tokens.developer })).json();
      if (events.some((e: { push_data?: { commit_to?: string } }) => e.push_data?.commit_to === res.json().id)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('no push event for the revert');
  });

  it('answers a conflict as the Service does', async () => {
    await commit('conflicting', [{ action: 'update', file_path: 'a.txt', content: '1\nTWO\n3\n' }], 'main');
    // test has 'two' on line 2 from the pick above; reverting main's change to TWO there conflicts.
    const res = await post('cherry_pick', shas.conflicting, { branch: 'test' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error_code, 'conflict');
    const dry = await post('revert', shas.first, { branch: 'main', dry_run: true }, people.tokens.maintainer);
    assert.equal(dry.statusCode, 400);
    assert.deepEqual([dry.json().error_code, dry.json().dry_run], ['conflict', 'error']);
  });

  it('refuses callers who may not push, missing commits and branches, and bad input', async () => {
    const reporter = await post('cherry_pick', shas.second, { branch: 'test' }, people.tokens.reporter);
    assert.equal(reporter.statusCode, 403);
    assert.deepEqual(reporter.json(), { message: '403 Forbidden - You are not allowed to push into this branch' });
    assert.equal((await post('revert', shas.second, { branch: 'main' }, people.tokens.nonMember)).statusCode, 404);
    assert.deepEqual((await post('revert', 'f'.repeat(40), { branch: 'test' })).json(), { message: '404 Commit Not Found' });
    assert.deepEqual((await post('revert', shas.second, { branch: 'nope' })).json(), { message: '404 Branch Not Found' });
    assert.deepEqual((await post('revert', shas.second, { branch: 'a..b' })).json(), { message: '404 Branch Not Found' });
    assert.deepEqual((await post('revert', shas.second, {})).json(), { message: '400 Bad request - "branch" not given' });
    assert.deepEqual((await post('cherry_pick', shas.second, { branch: ' ' })).json(), { error: 'branch is empty' });
  });
});
