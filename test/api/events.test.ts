/**
 * The activity feeds (issue 29, item 6): GET /events, /users/:id/events and /projects/:id/events
 * fed by what happens — a project's creation, `git push` over HTTP (new, updated, deleted refs,
 * tags, many refs at once), commits made through the API, members joining and leaving — and
 * events other areas record (issues, comments), filtered by action, target type and day, sorted,
 * and hidden from viewers who may not see them (private projects, confidential issues, code a
 * Guest may not read, private profiles).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { pushClone, type PushClone } from '../helpers/ci-push.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { recordEvent } from '../../src/domain/events/events.queries.ts';
import { nowIso } from '../../src/domain/clock.ts';
import type { UserRow } from '../../src/db/types.ts';

interface ApiEvent {
  id: number; project_id: number; action_name: string; target_id: number | null; target_iid: number | null; target_type: string | null;
  author_id: number; target_title: string | null; created_at: string; author_username: string;
  author?: { id: number; username: string };
  push_data?: {
    commit_count: number; action: string; ref_type: string; commit_from: string | null; commit_to: string | null;
    ref: string | null; commit_title: string | null; ref_count: number | null;
  };
  note?: { id: number; body: string; noteable_type: string; noteable_id: number; noteable_iid: number | null; system: boolean };
}

describe('events', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;
  let stranger: UserRow;
  let strangerToken: string;

  before(async () => {
    t = await startListeningApp();
    p = await createCiProject(t, { visibility: 'public' });
    clone = await pushClone(t.url, p);
    stranger = await createUser(t.db);
    strangerToken = await createToken(t.db, stranger);
  });
  after(async () => {
    await clone.remove();
    await t.close();
  });

  const get = async (url: string, token?: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v4${url}`, ...(token ? { token } : {}) });
    return { status: res.statusCode, body: res.json() as ApiEvent[], headers: res.headers };
  };
  const projectEvents = async (query = '', token = p.ownerToken, project = p) => {
    const res = await get(`/projects/${project.project.id}/events${query}`, token);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  /** Push events arrive after the push answered: waits until the project has `count` of them. */
  const waitForPushes = async (count: number, project = p) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const list = await projectEvents('?action=pushed&per_page=100&sort=asc', project.ownerToken, project);
      if (list.length >= count) return list;
      if (Date.now() > deadline) assert.fail(`expected ${count} push events, have ${list.length}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("records a project's creation as its creator's 'created' event without a target", async () => {
    const [created] = await projectEvents();
    assert.equal(created.action_name, 'created');
    assert.equal(created.target_type, null);
    assert.equal(created.target_id, null);
    assert.equal(created.target_iid, null);
    assert.equal(created.target_title, null);
    assert.equal(created.author_id, p.owner.id);
    assert.equal(created.author_username, p.owner.username);
    assert.equal(created.author?.username, p.owner.username);
    assert.equal(created.project_id, p.project.id);
    assert.equal(created.push_data, undefined);
    assert.equal(created.note, undefined);
    assert.deepEqual(Object.keys(created), [
      'id', 'project_id', 'action_name', 'target_id', 'target_iid', 'target_type', 'author_id', 'target_title', 'created_at',
      'author', 'author_username',
    ]);
  });

  it('records git pushes: a new branch, commits pushed to it, a tag, a deleted branch', async () => {
    const first = await clone.commitAndPush({ 'a.txt': 'a\n' }, { message: 'First commit\n\nwith a body' });
    const [created] = await waitForPushes(1);
    assert.equal(created.action_name, 'pushed new');
    assert.deepEqual(created.push_data, {
      commit_count: 1, action: 'created', ref_type: 'branch', commit_from: null, commit_to: first, ref: 'main',
      commit_title: 'First commit', ref_count: null,
    });
    assert.equal(created.author_id, p.owner.id);

    await clone.commitAndPush({ 'b.txt': 'b\n' }, { message: 'Second' });
    const long = `${'x'.repeat(80)}\n`;
    const third = await clone.commitAndPush({ 'c.txt': 'c\n' }, { message: long });
    const pushed = (await waitForPushes(2))[1];
    assert.equal(pushed.action_name, 'pushed to');
    assert.equal(pushed.push_data?.action, 'pushed');
    assert.equal(pushed.push_data?.commit_from, first);
    const all = await waitForPushes(3);
    const last = all[2];
    assert.equal(last.push_data?.commit_to, third);
    assert.equal(last.push_data?.commit_count, 1);
    // PushEventPayloadService: the title is truncated to 70 characters, the last three an ellipsis.
    assert.equal(last.push_data?.commit_title, `${'x'.repeat(67)}...`);

    // Two commits at once, on a new branch beside the default one: only the commits main lacks count.
    await clone.run(['checkout', '--quiet', '-b', 'feature']);
    await clone.run(['commit', '--quiet', '--allow-empty', '-m', 'f1']);
    await clone.run(['commit', '--quiet', '--allow-empty', '-m', 'f2']);
    await clone.run(['push', '--quiet', 'origin', 'feature']);
    const feature = (await waitForPushes(4))[3];
    assert.equal(feature.push_data?.ref, 'feature');
    assert.equal(feature.push_data?.commit_count, 2);
    assert.equal(feature.push_data?.commit_title, 'f2');

    await clone.run(['tag', '-a', 'v1.0', '-m', 'Release']);
    await clone.run(['push', '--quiet', 'origin', 'refs/tags/v1.0']);
    const tag = (await waitForPushes(5))[4];
    assert.equal(tag.action_name, 'pushed new');
    assert.equal(tag.push_data?.ref_type, 'tag');
    assert.equal(tag.push_data?.ref, 'v1.0');
    assert.equal(tag.push_data?.commit_count, 1);
    assert.equal(tag.push_data?.commit_title, 'f2');

    await clone.run(['push', '--quiet', 'origin', ':feature']);
    const deleted = (await waitForPushes(6))[5];
    assert.equal(deleted.action_name, 'deleted');
    assert.equal(deleted.push_data?.action, 'removed');
    assert.equal(deleted.push_data?.commit_to, null);
    assert.equal(deleted.push_data?.commit_count, 0);
    assert.equal(deleted.push_data?.commit_title, null);
  });

  it('records more new branches than push_event_activities_limit as one bulk event', async () => {
    await clone.run(['checkout', '--quiet', 'main']);
    for (const b of ['b1', 'b2', 'b3', 'b4']) await clone.run(['branch', b]);
    await clone.run(['push', '--quiet', 'origin', 'b1', 'b2', 'b3', 'b4']);
    const bulk = (await waitForPushes(7))[6];
    assert.equal(bulk.action_name, 'pushed new');
    assert.deepEqual(bulk.push_data, {
      commit_count: 0, action: 'created', ref_type: 'branch', commit_from: null, commit_to: null, ref: null, commit_title: null, ref_count: 4,
    });
  });

  it('records a commit made through the API as a push', async () => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/commits`, token: p.ownerToken,
      payload: { branch: 'main', commit_message: 'From the API', actions: [{ action: 'create', file_path: 'api.txt', content: 'x' }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const event = (await waitForPushes(8))[7];
    assert.equal(event.push_data?.commit_title, 'From the API');
    assert.equal(event.push_data?.commit_to, (res.json() as { id: string }).id);
  });

  it("records members joining and leaving as the member's events", async () => {
    const member = await createUser(t.db);
    const add = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: member.id, access_level: 30 },
    });
    assert.equal(add.statusCode, 201, add.body);
    const remove = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/members/${member.id}`, token: p.ownerToken });
    assert.equal(remove.statusCode, 204);
    const [left, joined] = await projectEvents('?per_page=2');
    assert.equal(joined.action_name, 'joined');
    assert.equal(joined.author_id, member.id);
    assert.equal(left.action_name, 'left');
    assert.equal(left.author_id, member.id);
    assert.equal(left.target_type, null);
    const ownJoined = await get(`/users/${member.id}/events?action=joined`, strangerToken);
    assert.deepEqual(ownJoined.body.map((e) => e.id), [joined.id]);
    // A project access token's bot joins as members do.
    const token = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/access_tokens`, token: p.ownerToken, payload: { name: 'bot', scopes: ['api'] },
    });
    assert.equal(token.statusCode, 201, token.body);
    const [botJoined] = await projectEvents('?action=joined&per_page=1');
    assert.equal(botJoined.author_id, (token.json() as { user_id: number }).user_id);
  });

  it('filters by action, target type and day, sorts, paginates, and refuses unknown values', async () => {
    const pushes = await projectEvents('?action=pushed&per_page=100');
    assert.ok(pushes.length >= 8);
    assert.ok(pushes.every((e) => e.action_name.startsWith('pushed') || e.action_name === 'deleted'));
    assert.deepEqual(await projectEvents('?target_type=milestone'), []);
    const asc = await projectEvents('?sort=asc&per_page=100');
    const desc = await projectEvents('?per_page=100');
    assert.deepEqual(asc.map((e) => e.id), desc.map((e) => e.id).reverse());
    const page = await get(`/projects/${p.project.id}/events?per_page=2&page=2`, p.ownerToken);
    assert.equal(page.body.length, 2);
    assert.equal(page.headers['x-page'], '2');
    assert.equal(page.body[0].id, desc[2].id);

    const today = nowIso().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    // Both bounds are exclusive days: `after` today and `before` today leave nothing of today.
    assert.deepEqual(await projectEvents(`?after=${today}`), []);
    assert.deepEqual(await projectEvents(`?before=${today}`), []);
    assert.equal((await projectEvents(`?after=${yesterday}&before=${tomorrow}&per_page=100`)).length, desc.length);

    for (const bad of ['action=opened', 'target_type=Issue', 'sort=up', 'before=not-a-date']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/events?${bad}`, token: p.ownerToken });
      assert.equal(res.statusCode, 400, bad);
    }
  });

  it("GET /events is the caller's own; scope=all every project they are a member of", async () => {
    const member = await createUser(t.db);
    const memberToken = await createToken(t.db, member);
    await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: member.id, access_level: 20 },
    });
    const own = await get('/events', memberToken);
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.map((e) => [e.action_name, e.author_id]), [['joined', member.id]]);
    const all = await get('/events?scope=all&per_page=100', memberToken);
    assert.ok(all.body.some((e) => e.author_id === p.owner.id && e.action_name === 'pushed new'));
    assert.equal((await get('/events')).status, 401);
    // Someone in no project sees nothing with scope=all.
    assert.deepEqual((await get('/events?scope=all', strangerToken)).body, []);
  });

  it("hides a private project's events from those who cannot see it, and pushes from its Guests", async () => {
    const secret = await createCiProject(t, { owner: p.owner, visibility: 'private' });
    const secretClone = await pushClone(t.url, secret);
    try {
      await secretClone.commitAndPush({ 's.txt': 's\n' });
      await waitForPushes(1, secret);
      const guest = await createUser(t.db);
      const guestToken = await createToken(t.db, guest);
      await t.request({
        method: 'POST', url: `/api/v4/projects/${secret.project.id}/members`, token: p.ownerToken, payload: { user_id: guest.id, access_level: 10 },
      });
      const ownerFeed = await get(`/users/${p.owner.id}/events?per_page=100`, strangerToken);
      assert.ok(ownerFeed.body.length > 0);
      assert.ok(ownerFeed.body.every((e) => e.project_id === p.project.id), 'no event of the private project');
      assert.equal((await get(`/projects/${secret.project.id}/events`, strangerToken)).status, 404);
      // A Guest of a private project may not read its code: its pushes are left out, its creation is not.
      const guestView = await get(`/projects/${secret.project.id}/events?per_page=100`, guestToken);
      assert.deepEqual(guestView.body.map((e) => e.action_name).sort(), ['created', 'joined']);
      const admin = await createAdmin(t.db);
      const adminView = await get(`/projects/${secret.project.id}/events?per_page=100`, await createToken(t.db, admin));
      assert.ok(adminView.body.some((e) => e.action_name === 'pushed new'));
      // Anonymous readers see a public project's events.
      assert.ok((await get(`/projects/${p.project.id}/events`)).body.length > 0);
    } finally {
      await secretClone.remove();
    }
  });

  it("presents issue and comment events, and hides a confidential issue's from those who may not read it", async () => {
    const now = nowIso();
    const insertIssue = (iid: number, title: string, confidential: 0 | 1) => t.db.insertInto('issues').values({
      iid, project_id: p.project.id, author_id: p.owner.id, title, description: null, state: 'opened', milestone_id: null, due_date: null,
      confidential, discussion_locked: null, relative_position: null, closed_at: null, closed_by_id: null, updated_by_id: null,
      last_edited_at: null, last_edited_by_id: null, moved_to_id: null, duplicated_to_id: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const open = await insertIssue(901, 'An open issue', 0);
    const secret = await insertIssue(902, 'A confidential issue', 1);
    await recordEvent(t.db, { project_id: p.project.id, author_id: p.owner.id, action: 'created', target_type: 'Issue', target_id: open.id });
    await recordEvent(t.db, { project_id: p.project.id, author_id: p.owner.id, action: 'created', target_type: 'Issue', target_id: secret.id });
    const note = await t.db.insertInto('notes').values({
      note: 'Looks good', noteable_type: 'Issue', noteable_id: open.id, commit_id: null, project_id: p.project.id, author_id: p.owner.id,
      system_action: null, type: null, discussion_id: 'a'.repeat(40), resolved_at: null, resolved_by_id: null, position: null,
      updated_by_id: null, last_edited_at: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    await recordEvent(t.db, { project_id: p.project.id, author_id: p.owner.id, action: 'commented', target_type: 'Note', target_id: note.id });
    await recordEvent(t.db, { project_id: p.project.id, author_id: p.owner.id, action: 'closed', target_type: 'Issue', target_id: secret.id });

    const ownerView = await projectEvents('?per_page=4');
    assert.deepEqual(ownerView.map((e) => [e.action_name, e.target_type, e.target_title, e.target_iid]), [
      ['closed', 'Issue', 'A confidential issue', 902],
      ['commented on', 'Note', 'An open issue', note.id],
      ['opened', 'Issue', 'A confidential issue', 902],
      ['opened', 'Issue', 'An open issue', 901],
    ]);
    const comment = ownerView[1];
    assert.equal(comment.note?.body, 'Looks good');
    assert.equal(comment.note?.noteable_type, 'Issue');
    assert.equal(comment.note?.noteable_id, open.id);
    assert.equal(comment.note?.noteable_iid, 901);
    assert.equal(comment.note?.system, false);

    const issueEvents = await projectEvents('?target_type=issue', strangerToken);
    assert.deepEqual(issueEvents.map((e) => e.target_title), ['An open issue']);
    const strangerView = await get(`/projects/${p.project.id}/events?per_page=4`, strangerToken);
    // The page is read first, then filtered (EventsFinder): the total still counts what was hidden.
    assert.deepEqual(strangerView.body.map((e) => e.target_title), ['An open issue', 'An open issue']);
  });

  it("answers an empty list for a private profile, except to its owner and administrators, and 404 for no user", async () => {
    const shy = await createUser(t.db, { private_profile: 1 });
    const shyToken = await createToken(t.db, shy);
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token: shyToken, payload: { name: 'shy-project', visibility: 'public' } });
    assert.equal(project.statusCode, 201);
    assert.deepEqual((await get(`/users/${shy.id}/events`, strangerToken)).body, []);
    assert.equal((await get(`/users/${shy.username}/events`, shyToken)).body.length, 1);
    assert.equal((await get(`/users/${shy.id}/events`, await createToken(t.db, await createAdmin(t.db)))).body.length, 1);
    const missing = await get('/users/999999/events', strangerToken);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: '404 User Not Found' });
  });
});
