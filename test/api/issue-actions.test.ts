/** Subscriptions, participants, closing merge requests, user agent detail and reordering of one issue. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createProjectWithMembers } from '../helpers/issues.ts';

describe('issue actions', () => {
  let t: TestApp;
  let owner: UserRow;
  let guest: UserRow;
  let reporter: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let reporterToken: string;
  let project: { id: number };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    guest = await createUser(t.db);
    reporter = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    reporterToken = await createToken(t.db, reporter);
    project = await createProjectWithMembers(t, ownerToken, [
      { user_id: guest.id, access_level: 10 }, { user_id: reporter.id, access_level: 20 },
    ]);
  });
  after(async () => { await t.close(); });

  const req = (method: 'GET' | 'POST' | 'PUT', token: string | undefined, path: string, payload?: Record<string, unknown>) =>
    t.request({ method, url: `/api/v4/projects/${project.id}/issues/${path}`, token, ...(payload ? { payload } : {}) });

  it('subscribes and unsubscribes, answering 304 when nothing changes', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    const sub = await req('POST', guestToken, `${issue.iid}/subscribe`);
    assert.equal(sub.statusCode, 201, sub.body);
    assert.equal(sub.json().id, issue.id);
    assert.equal(sub.json().subscribed, true);
    assert.equal((await req('POST', guestToken, `${issue.iid}/subscribe`)).statusCode, 304);
    const unsub = await req('POST', guestToken, `${issue.iid}/unsubscribe`);
    assert.equal(unsub.statusCode, 201);
    assert.equal(unsub.json().subscribed, false);
    assert.equal((await req('POST', guestToken, `${issue.iid}/unsubscribe`)).statusCode, 304);
    const rows = await t.db.selectFrom('subscriptions').selectAll().where('subscribable_id', '=', issue.id).execute();
    assert.equal(rows.length, 1, 'one row per user and issue');
    assert.equal(rows[0].subscribed, 0);
    // The author takes part, so is subscribed without a row; unsubscribing writes one that overrides it.
    assert.equal((await req('POST', ownerToken, `${issue.iid}/subscribe`)).statusCode, 304);
    assert.equal((await req('POST', ownerToken, `${issue.iid}/unsubscribe`)).json().subscribed, false);
    assert.equal((await req('POST', undefined, `${issue.iid}/subscribe`)).statusCode, 401);
    const secret = await createIssue(t.db, { project_id: project.id, author_id: owner.id, confidential: true });
    assert.equal((await req('POST', guestToken, `${secret.iid}/subscribe`)).statusCode, 404);
  });

  it('lists participants who may read the issue: author, assignees, commenters, mentioned', async () => {
    const mentioned = await createUser(t.db);
    const stranger = await createUser(t.db);
    const issue = await createIssue(t.db, {
      project_id: project.id, author_id: owner.id, assignee_ids: [reporter.id],
      description: `cc @${mentioned.username} @${guest.username}`,
    });
    await t.db.insertInto('notes').values({
      note: `what about @${stranger.username}?`, noteable_type: 'Issue', noteable_id: issue.id, commit_id: null, project_id: project.id,
      author_id: guest.id, system: 0, system_action: null, type: null, discussion_id: 'b'.repeat(40), resolved_at: null,
      resolved_by_id: null, position: null, updated_by_id: null, last_edited_at: null,
      created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
    }).execute();
    const res = await req('GET', guestToken, `${issue.iid}/participants`);
    assert.equal(res.statusCode, 200, res.body);
    // The mentioned users are not members of the private project: they cannot read it.
    assert.deepEqual(res.json().map((u: { id: number }) => u.id), [owner.id, reporter.id, guest.id]);
    assert.deepEqual(Object.keys(res.json()[0]), ['id', 'username', 'name', 'state', 'avatar_url', 'web_url']);
    assert.equal(res.headers['x-total'], '3');

    // On a public project everyone named may read it.
    const pub = await createProjectWithMembers(t, ownerToken, [], { visibility: 'public' });
    const open = await createIssue(t.db, { project_id: pub.id, author_id: owner.id, description: `@${mentioned.username}` });
    const shown = await t.request({ method: 'GET', url: `/api/v4/projects/${pub.id}/issues/${open.iid}/participants` });
    assert.deepEqual(shown.json().map((u: { id: number }) => u.id), [owner.id, mentioned.id]);
    // A confidential issue leaves out a mentioned guest.
    const secret = await createIssue(t.db, { project_id: project.id, author_id: owner.id, confidential: true, description: `@${guest.username}` });
    assert.deepEqual((await req('GET', reporterToken, `${secret.iid}/participants`)).json().map((u: { id: number }) => u.id), [owner.id]);
  });

  it('answers the merge requests that close or mention an issue (none before merge requests exist)', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    for (const path of ['closed_by', 'related_merge_requests']) {
      const res = await req('GET', guestToken, `${issue.iid}/${path}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), []);
      assert.equal(res.headers['x-total'], '0');
      assert.equal(res.headers['x-page'], '1');
      assert.equal((await req('GET', guestToken, `999/${path}`)).statusCode, 404);
    }
  });

  it('shows the user agent detail to administrators only', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    assert.equal((await req('GET', ownerToken, `${issue.iid}/user_agent_detail`)).statusCode, 403);
    const none = await req('GET', ROOT_TOKEN, `${issue.iid}/user_agent_detail`);
    assert.equal(none.statusCode, 404);
    assert.deepEqual(none.json(), { message: '404 UserAgentDetail Not Found' });
    await t.db.insertInto('user_agent_details').values({
      subject_type: 'Issue', subject_id: issue.id, user_agent: 'curl/8', ip_address: '10.0.0.1', created_at: '2026-11-01T00:00:00.000Z',
    }).execute();
    const res = await req('GET', ROOT_TOKEN, `${issue.iid}/user_agent_detail`);
    assert.deepEqual(res.json(), { user_agent: 'curl/8', ip_address: '10.0.0.1', akismet_submitted: false });
  });

  it('reorders an issue between its neighbours', async () => {
    const p = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 10 }, { user_id: reporter.id, access_level: 20 }]);
    const [a, b, c] = [
      await createIssue(t.db, { project_id: p.id, author_id: owner.id }),
      await createIssue(t.db, { project_id: p.id, author_id: owner.id }),
      await createIssue(t.db, { project_id: p.id, author_id: owner.id }),
    ];
    const put = (token: string, iid: number, payload: Record<string, unknown>) =>
      t.request({ method: 'PUT', url: `/api/v4/projects/${p.id}/issues/${iid}/reorder`, token, payload });
    const pos = async () => {
      const rows = await t.db.selectFrom('issues').select(['id', 'relative_position']).where('project_id', '=', p.id).execute();
      return new Map(rows.map((r) => [r.id, r.relative_position]));
    };
    assert.equal((await put(reporterToken, c.iid, { move_after_id: a.id })).statusCode, 200);
    let at = await pos();
    assert.ok(at.get(c.id)! > at.get(a.id)!);
    assert.equal((await put(reporterToken, b.iid, { move_after_id: a.id, move_before_id: c.id })).statusCode, 200);
    at = await pos();
    assert.ok(at.get(a.id)! < at.get(b.id)! && at.get(b.id)! < at.get(c.id)!, JSON.stringify([...at]));
    assert.equal((await put(reporterToken, a.iid, { move_before_id: b.id, move_after_id: c.id })).statusCode, 200);
    at = await pos();
    assert.ok(at.get(b.id)! < at.get(a.id)! && at.get(a.id)! < at.get(c.id)!, JSON.stringify([...at]));
    // No room: two neighbours a position apart make room by moving the upper one on.
    await t.db.updateTable('issues').set({ relative_position: 10 }).where('id', '=', a.id).execute();
    await t.db.updateTable('issues').set({ relative_position: 11 }).where('id', '=', b.id).execute();
    const shown = await put(reporterToken, c.iid, { move_after_id: a.id, move_before_id: b.id });
    assert.equal(shown.json().id, c.id);
    at = await pos();
    assert.ok(at.get(a.id)! < at.get(c.id)! && at.get(c.id)! < at.get(b.id)!, JSON.stringify([...at]));

    assert.equal((await put(guestToken, a.iid, { move_after_id: b.id })).statusCode, 403);
    const none = await put(reporterToken, a.iid, {});
    assert.equal(none.statusCode, 422);
    const missing = await put(reporterToken, a.iid, { move_after_id: 2_000_000 });
    assert.deepEqual(missing.json(), { message: '404 Not found' });
    const elsewhere = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    assert.equal((await put(reporterToken, a.iid, { move_after_id: elsewhere.id })).statusCode, 404);
  });
});
