/** Moving and cloning issues between projects: what is copied, what happens to the original, who may. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createLabel, createMilestone, createProjectWithMembers, systemNotesOf } from '../helpers/issues.ts';

describe('issue move and clone', () => {
  let t: TestApp;
  let owner: UserRow;
  let author: UserRow;
  let guest: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let reporterToken: string;
  let src: { id: number; path_with_namespace: string };
  let dst: { id: number; path_with_namespace: string };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    author = await createUser(t.db);
    guest = await createUser(t.db);
    const reporter = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    reporterToken = await createToken(t.db, reporter);
    src = await createProjectWithMembers(t, ownerToken, [
      { user_id: author.id, access_level: 10 }, { user_id: guest.id, access_level: 10 }, { user_id: reporter.id, access_level: 20 },
    ]);
    dst = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 40 }, { user_id: reporter.id, access_level: 10 }]);
  });
  after(async () => { await t.close(); });

  const post = (token: string, iid: number, action: 'move' | 'clone', payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${src.id}/issues/${iid}/${action}`, token, payload });
  const short = (p: { path_with_namespace: string }) => p.path_with_namespace.split('/')[1];

  it('moves an issue: a new issue in the target with labels and milestone by title, notes, awards and time; the old one closed', async () => {
    const bug = await createLabel(t.db, { project_id: src.id, title: 'bug' });
    const only = await createLabel(t.db, { project_id: src.id, title: 'only-here' });
    const dstBug = await createLabel(t.db, { project_id: dst.id, title: 'bug' });
    const m = await createMilestone(t.db, { project_id: src.id, title: 'v1' });
    const dstM = await createMilestone(t.db, { project_id: dst.id, title: 'v1' });
    await createIssue(t.db, { project_id: dst.id, author_id: owner.id });
    const issue = await createIssue(t.db, {
      project_id: src.id, author_id: author.id, title: 'Move me', description: 'details', assignee_ids: [guest.id],
      label_ids: [bug.id, only.id], milestone_id: m.id,
    });
    await t.db.insertInto('notes').values({
      note: 'a comment', noteable_type: 'Issue', noteable_id: issue.id, commit_id: null, project_id: src.id, author_id: guest.id,
      system: 0, system_action: null, type: null, discussion_id: 'c'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).execute();
    await t.db.insertInto('award_emoji').values({
      name: 'thumbsup', user_id: guest.id, awardable_type: 'Issue', awardable_id: issue.id,
      created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).execute();
    await t.db.insertInto('timelogs').values({
      issue_id: issue.id, merge_request_id: null, user_id: guest.id, time_spent: 3600, spent_at: '2026-11-01T00:00:00.000Z', summary: null,
      created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).execute();

    const res = await post(ownerToken, issue.iid, 'move', { to_project_id: dst.id });
    assert.equal(res.statusCode, 201, res.body);
    const moved = res.json();
    assert.equal(moved.project_id, dst.id);
    assert.equal(moved.iid, 2, 'the next iid of the target');
    assert.equal(moved.title, 'Move me');
    assert.equal(moved.description, 'details');
    assert.equal(moved.state, 'opened');
    assert.equal(moved.author.id, author.id);
    assert.deepEqual(moved.assignees.map((u: { id: number }) => u.id), [guest.id]);
    assert.deepEqual(moved.labels, ['bug'], 'only labels the target has');
    assert.equal(moved.milestone.id, dstM.id);
    assert.equal(moved.upvotes, 1);
    assert.equal(moved.user_notes_count, 1);
    assert.equal(moved.time_stats.total_time_spent, 3600);
    assert.equal(moved.references.relative, `${dst.path_with_namespace}#2`, 'presented from the source project');
    const labelRow = await t.db.selectFrom('label_links').select('label_id').where('target_type', '=', 'Issue').where('target_id', '=', moved.id).execute();
    assert.deepEqual(labelRow.map((r) => r.label_id), [dstBug.id]);

    const old = await t.db.selectFrom('issues').selectAll().where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(old.state, 'closed');
    assert.equal(old.closed_by_id, owner.id);
    assert.equal(old.moved_to_id, moved.id);
    assert.deepEqual(await systemNotesOf(t.db, issue.id), [`moved to ${short(dst)}#2`]);
    assert.deepEqual(await systemNotesOf(t.db, moved.id), [`moved from ${short(src)}#${issue.iid}`]);
    const states = await t.db.selectFrom('resource_state_events').select('state').where('issue_id', '=', issue.id).execute();
    assert.deepEqual(states, [{ state: 'closed' }]);

    // A moved issue cannot be moved again.
    const again = await post(ownerToken, issue.iid, 'move', { to_project_id: dst.id });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: 'Cannot move issue due to insufficient permissions!' });
  });

  it('refuses a move to the same project, to an unknown project, and without Reporter in both projects', async () => {
    const issue = await createIssue(t.db, { project_id: src.id, author_id: owner.id });
    const same = await post(ownerToken, issue.iid, 'move', { to_project_id: src.id });
    assert.equal(same.statusCode, 400);
    assert.deepEqual(same.json(), { message: 'Cannot move issue to project it originates from!' });
    const unknown = await post(ownerToken, issue.iid, 'move', { to_project_id: 999999 });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), { message: '404 Project Not Found' });
    // A guest of the source (maintainer of the target) and a reporter of the source (guest of the target).
    for (const token of [guestToken, reporterToken]) {
      const res = await post(token, issue.iid, 'move', { to_project_id: dst.id });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { message: 'Cannot move issue due to insufficient permissions!' });
    }
    // A project the caller cannot see at all is refused the same way (its existence is not confirmed otherwise).
    const hidden = await createProjectWithMembers(t, await createToken(t.db, await createUser(t.db)));
    assert.equal((await post(reporterToken, issue.iid, 'move', { to_project_id: hidden.id })).statusCode, 400);
    assert.equal((await post(ownerToken, issue.iid, 'move', {})).statusCode, 400);
    const secret = await createIssue(t.db, { project_id: src.id, author_id: owner.id, confidential: true });
    assert.equal((await post(guestToken, secret.iid, 'move', { to_project_id: dst.id })).statusCode, 404);
    const row = await t.db.selectFrom('issues').select('state').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(row.state, 'opened');
  });

  it('clones an issue, with its notes only when asked, leaving the original open', async () => {
    const issue = await createIssue(t.db, { project_id: src.id, author_id: author.id, title: 'Clone me' });
    await t.db.insertInto('notes').values({
      note: 'keep me', noteable_type: 'Issue', noteable_id: issue.id, commit_id: null, project_id: src.id, author_id: guest.id,
      system: 0, system_action: null, type: null, discussion_id: 'd'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).execute();
    const plain = await post(ownerToken, issue.iid, 'clone', { to_project_id: dst.id });
    assert.equal(plain.statusCode, 201, plain.body);
    assert.equal(plain.json().author.id, owner.id, 'the clone is the caller’s');
    assert.equal(plain.json().user_notes_count, 0);
    assert.equal(plain.json().references.relative, `#${plain.json().iid}`, 'presented from the target project');
    const withNotes = await post(ownerToken, issue.iid, 'clone', { to_project_id: dst.id, with_notes: true });
    assert.equal(withNotes.json().user_notes_count, 1);
    // Cloning within the same project is allowed.
    const here = await post(ownerToken, issue.iid, 'clone', { to_project_id: src.id });
    assert.equal(here.statusCode, 201);
    assert.equal(here.json().project_id, src.id);

    const old = await t.db.selectFrom('issues').selectAll().where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(old.state, 'opened');
    assert.equal(old.moved_to_id, null);
    assert.deepEqual(await systemNotesOf(t.db, issue.id), [
      `cloned to ${short(dst)}#${plain.json().iid}`, `cloned to ${short(dst)}#${withNotes.json().iid}`, `cloned to #${here.json().iid}`,
    ]);
    assert.deepEqual(await systemNotesOf(t.db, plain.json().id), [`cloned from ${short(src)}#${issue.iid}`]);
    const refused = await post(guestToken, issue.iid, 'clone', { to_project_id: dst.id });
    assert.deepEqual(refused.json(), { message: 'Cannot clone issue due to insufficient permissions!' });
  });
});
