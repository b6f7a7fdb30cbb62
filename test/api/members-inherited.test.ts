/**
 * Inherited members (issue 35, item 5): GET /projects/:id/members/all and /groups/:id/members/all
 * list direct members and those who hold access through an ancestor group, one row per user at
 * the highest level; GET …/members/all/:user_id shows one. Before these routes existed,
 * `/members/all` fell into `/members/:user_id` and answered `400 user_id is invalid`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

interface MemberJson { id: number; username: string; access_level: number; membership_state: string }
const levels = (body: MemberJson[]) => body.map((m) => [m.id, m.access_level]);

describe('inherited members (members/all)', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let alice: UserRow;
  let bob: UserRow;
  let carol: UserRow;
  let stranger: UserRow;
  let parentId: number;
  let subId: number;
  let projectId: number;

  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url, token: ownerToken, payload });
    assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    return res.json();
  };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    [alice, bob, carol, stranger] = [await createUser(t.db), await createUser(t.db), await createUser(t.db), await createUser(t.db)];
    parentId = (await post('/api/v4/groups', { name: 'Parent', path: 'inherit-parent', visibility: 'private' })).id;
    subId = (await post('/api/v4/groups', { name: 'Sub', path: 'inherit-sub', parent_id: parentId, visibility: 'private' })).id;
    projectId = (await post('/api/v4/projects', { name: 'Inherited', namespace_id: subId })).id;
    // alice: Developer of the parent, Maintainer of the sub-group (the higher one wins).
    await post(`/api/v4/groups/${parentId}/members`, { user_id: alice.id, access_level: 30 });
    await post(`/api/v4/groups/${subId}/members`, { user_id: alice.id, access_level: 40 });
    // bob: Reporter of the sub-group, Maintainer of the project itself.
    await post(`/api/v4/groups/${subId}/members`, { user_id: bob.id, access_level: 20 });
    await post(`/api/v4/projects/${projectId}/members`, { user_id: bob.id, access_level: 40 });
    // carol: Guest of the project only.
    await post(`/api/v4/projects/${projectId}/members`, { user_id: carol.id, access_level: 10 });
  });
  after(async () => { await t?.close(); });

  it('lists a project\'s members with those of its ancestor groups, once each, at the highest level', async () => {
    const res = await t.request({ url: `/api/v4/projects/${projectId}/members/all`, token: ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as MemberJson[];
    // Ordered by user id; owner owns both groups.
    assert.deepEqual(levels(body), [[owner.id, 50], [alice.id, 40], [bob.id, 40], [carol.id, 10]]);
    assert.equal(res.headers['x-total'], '4');
    assert.ok(body.every((m) => m.membership_state === 'active'));
    // The direct list is the project's own members only.
    const direct = await t.request({ url: `/api/v4/projects/${projectId}/members`, token: ownerToken });
    assert.deepEqual(levels(direct.json()), [[bob.id, 40], [carol.id, 10]]);
  });

  it('lists a group\'s members with its ancestors\', not its projects\'', async () => {
    const sub = await t.request({ url: `/api/v4/groups/${subId}/members/all`, token: ownerToken });
    assert.equal(sub.statusCode, 200, sub.body);
    assert.deepEqual(levels(sub.json()), [[owner.id, 50], [alice.id, 40], [bob.id, 20]]);
    const parent = await t.request({ url: `/api/v4/groups/${parentId}/members/all`, token: ownerToken });
    assert.deepEqual(levels(parent.json()), [[owner.id, 50], [alice.id, 30]]);
  });

  it('filters by query, user_ids and state, and pages', async () => {
    const url = `/api/v4/projects/${projectId}/members/all`;
    const ids = async (query: string) => {
      const res = await t.request({ url: `${url}?${query}`, token: ownerToken });
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      return (res.json() as MemberJson[]).map((m) => m.id);
    };
    assert.deepEqual(await ids(`query=${alice.username.toUpperCase()}`), [alice.id]);
    assert.deepEqual(await ids(`user_ids=${carol.id},${alice.id}`), [alice.id, carol.id]);
    assert.deepEqual(await ids(`user_ids[]=${bob.id}`), [bob.id]);
    assert.deepEqual(await ids(`user_ids=${stranger.id}`), []);
    assert.deepEqual(await ids('state=active'), [owner.id, alice.id, bob.id, carol.id]);
    assert.deepEqual(await ids('state=awaiting'), []);
    assert.deepEqual(await ids('per_page=2&page=2'), [bob.id, carol.id]);
    const bad = await t.request({ url: `${url}?state=pending`, token: ownerToken });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'state does not have a valid value' }]);
    const badIds = await t.request({ url: `${url}?user_ids=a,b`, token: ownerToken });
    assert.deepEqual([badIds.statusCode, badIds.json()], [400, { error: 'user_ids is invalid' }]);
    // The direct list takes user_ids too.
    const direct = await t.request({ url: `/api/v4/projects/${projectId}/members?user_ids=${carol.id}`, token: ownerToken });
    assert.deepEqual((direct.json() as MemberJson[]).map((m) => m.id), [carol.id]);
  });

  it('shows one member, direct or inherited; 404 for anyone else', async () => {
    const inherited = await t.request({ url: `/api/v4/projects/${projectId}/members/all/${alice.id}`, token: ownerToken });
    assert.equal(inherited.statusCode, 200, inherited.body);
    assert.deepEqual([inherited.json().id, inherited.json().access_level], [alice.id, 40]);
    const own = await t.request({ url: `/api/v4/groups/${subId}/members/all/${bob.id}`, token: ownerToken });
    assert.deepEqual([own.json().id, own.json().access_level], [bob.id, 20]);
    // alice is no direct member of the project.
    const direct = await t.request({ url: `/api/v4/projects/${projectId}/members/${alice.id}`, token: ownerToken });
    assert.deepEqual([direct.statusCode, direct.json()], [404, { message: '404 Not found' }]);
    const none = await t.request({ url: `/api/v4/projects/${projectId}/members/all/${stranger.id}`, token: ownerToken });
    assert.deepEqual([none.statusCode, none.json()], [404, { message: '404 Not found' }]);
    const word = await t.request({ url: `/api/v4/groups/${subId}/members/all/someone`, token: ownerToken });
    assert.deepEqual([word.statusCode, word.json()], [400, { error: 'user_id is invalid' }]);
  });

  it('answers as the other member routes do for callers who may not see the source', async () => {
    const strangerToken = await createToken(t.db, stranger);
    const hidden = await t.request({ url: `/api/v4/groups/${subId}/members/all`, token: strangerToken });
    assert.deepEqual([hidden.statusCode, hidden.json()], [404, { message: '404 Group Not Found' }]);
    const project = await t.request({ url: `/api/v4/projects/${projectId}/members/all/${alice.id}`, token: strangerToken });
    assert.deepEqual([project.statusCode, project.json()], [404, { message: '404 Project Not Found' }]);
    const anonymous = await t.request({ url: `/api/v4/projects/${projectId}/members/all` });
    assert.equal(anonymous.statusCode, 401);
    // An inherited member reads the list as any member does.
    const aliceToken = await createToken(t.db, alice);
    const asAlice = await t.request({ url: `/api/v4/projects/${projectId}/members/all`, token: aliceToken });
    assert.equal(asAlice.statusCode, 200, asAlice.body);
  });
});
