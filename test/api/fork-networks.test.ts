/**
 * The fork lifecycle (issue 30, with the forks of issue 32): the open requests that cross a fork
 * relationship are closed when it ends (Projects::UnlinkForkService, on DELETE /projects/:id/fork
 * and on deleting the fork), as a close writes it (a `closed` state event, the `closed` event);
 * one open request per source branch AND target branch (MergeRequest#validate_branches), so one
 * branch may be proposed into two target branches; fork networks kept in their own rows, so the
 * forks of a deleted root stay one network (requests between them, /forks), while a project that
 * left the network may no longer propose into it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { waitFor } from '../helpers/storage-shards.ts';
import type { UserRow } from '../../src/db/types.ts';

let t: TestApp;
let ownerToken: string;
let contrib: UserRow;
let contribToken: string;
let thirdToken: string;

before(async () => {
  t = await startTestApp({ KILN_JOB_POLL_MS: '20' });
  ownerToken = await createToken(t.db, await createUser(t.db, { username: 'netowner' }));
  contrib = await createUser(t.db, { username: 'netcontrib' });
  contribToken = await createToken(t.db, contrib);
  thirdToken = await createToken(t.db, await createUser(t.db, { username: 'netthird' }));
});
after(async () => {
  await t.close();
});

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const api = (method: Method, url: string, token: string, payload?: object) =>
  t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });

async function ok(method: Method, url: string, token: string, payload?: object) {
  const r = await api(method, url, token, payload);
  assert.ok(r.statusCode < 300, `${method} ${url}: ${r.statusCode} ${r.body}`);
  return r.json();
}

async function newProject(name: string, token: string): Promise<{ id: number; path_with_namespace: string }> {
  return ok('POST', '/projects', token, { name, path: name, visibility: 'public', initialize_with_readme: true });
}

/** A fork made by the job, waited for. */
async function forkOf(id: number, token: string, pathName: string): Promise<{ id: number; path_with_namespace: string }> {
  const fork = await ok('POST', `/projects/${id}/fork`, token, { path: pathName, name: pathName });
  await waitFor(`fork ${pathName}`, async () => {
    const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', fork.id).executeTakeFirstOrThrow();
    return row.import_status === 'finished' ? true : undefined;
  }, 30_000);
  return fork;
}

/** A branch with one commit of its own, from main. */
async function branchWithCommit(projectId: number, branch: string, token: string): Promise<void> {
  await ok('POST', `/projects/${projectId}/repository/commits`, token, {
    branch, start_branch: 'main', commit_message: `work on ${branch}`,
    actions: [{ action: 'create', file_path: `${branch}.txt`, content: `${branch}\n` }],
  });
}

function openRequest(from: number, into: number, branch: string, token: string, targetBranch = 'main') {
  return api('POST', `/projects/${from}/merge_requests`, token, {
    source_branch: branch, target_branch: targetBranch, title: `${branch} into ${targetBranch}`, target_project_id: into,
  });
}

async function stateEvents(mrId: number) {
  return t.db.selectFrom('resource_state_events').select(['state', 'user_id']).where('merge_request_id', '=', mrId).execute();
}

test('one open request per source branch and target branch: two targets from one branch, a true duplicate refused', async () => {
  const p = await newProject('pairs', ownerToken);
  await branchWithCommit(p.id, 'feat', ownerToken);
  await ok('POST', `/projects/${p.id}/repository/branches`, ownerToken, { branch: 'release', ref: 'main' });
  const intoMain = await openRequest(p.id, p.id, 'feat', ownerToken);
  assert.equal(intoMain.statusCode, 201, intoMain.body);
  const intoRelease = await openRequest(p.id, p.id, 'feat', ownerToken, 'release');
  assert.equal(intoRelease.statusCode, 201, intoRelease.body);
  assert.equal(intoRelease.json().iid, 2);
  const dup = await openRequest(p.id, p.id, 'feat', ownerToken);
  assert.equal(dup.statusCode, 409, dup.body);
  assert.deepEqual(dup.json(), { message: ['Another open merge request already exists for this source branch: !1'] });
  // Retargeting the second onto the first's target branch is the same duplicate.
  const retarget = await api('PUT', `/projects/${p.id}/merge_requests/2`, ownerToken, { target_branch: 'main' });
  assert.equal(retarget.statusCode, 409, retarget.body);
  assert.deepEqual(retarget.json(), { message: ['Another open merge request already exists for this source branch: !1'] });
  // Once the first is closed, the pair is free again.
  await ok('PUT', `/projects/${p.id}/merge_requests/1`, ownerToken, { state_event: 'close' });
  const again = await openRequest(p.id, p.id, 'feat', ownerToken);
  assert.equal(again.statusCode, 201, again.body);
  const rows = await t.db.selectFrom('merge_requests').select(['target_branch', 'state']).where('project_id', '=', p.id)
    .orderBy('iid').execute();
  assert.deepEqual(rows.map((r) => [r.target_branch, r.state]), [['main', 'closed'], ['release', 'opened'], ['main', 'opened']]);
});

test('unlinking a fork closes the open requests between it and its network, and it may propose there no more', async () => {
  const up = await newProject('unlink-up', ownerToken);
  const fork = await forkOf(up.id, contribToken, 'unlink-fork');
  await branchWithCommit(fork.id, 'f1', contribToken);
  await branchWithCommit(fork.id, 'f2', contribToken);
  const across = await openRequest(fork.id, up.id, 'f1', contribToken);
  assert.equal(across.statusCode, 201, across.body);
  // A request inside the fork does not cross the relationship: it stays open.
  const inside = await openRequest(fork.id, fork.id, 'f2', contribToken);
  assert.equal(inside.statusCode, 201, inside.body);
  // And one from the upstream into the fork (from_and_to_forks takes both directions).
  await branchWithCommit(up.id, 'u1', ownerToken);
  const back = await openRequest(up.id, fork.id, 'u1', ROOT_TOKEN);
  assert.equal(back.statusCode, 201, back.body);

  assert.equal((await api('DELETE', `/projects/${fork.id}/fork`, contribToken)).statusCode, 204);
  const closed = await ok('GET', `/projects/${up.id}/merge_requests/${across.json().iid}`, ownerToken);
  assert.equal(closed.state, 'closed');
  assert.equal(closed.closed_by.username, 'netcontrib');
  assert.ok(closed.closed_at);
  assert.deepEqual(await stateEvents(across.json().id), [{ state: 'closed', user_id: contrib.id }]);
  const closedBack = await ok('GET', `/projects/${fork.id}/merge_requests/${back.json().iid}`, contribToken);
  assert.equal(closedBack.state, 'closed');
  assert.equal((await ok('GET', `/projects/${fork.id}/merge_requests/${inside.json().iid}`, contribToken)).state, 'opened');
  const events = await t.db.selectFrom('events').select(['action', 'author_id']).where('target_type', '=', 'MergeRequest')
    .where('target_id', '=', across.json().id).orderBy('id').execute();
  assert.deepEqual(events.map((e) => e.action), ['created', 'closed']);
  // Out of the network: no new request into the old upstream; nothing left to unlink.
  const refused = await openRequest(fork.id, up.id, 'f2', contribToken);
  assert.equal(refused.statusCode, 422, refused.body);
  assert.deepEqual(refused.json(), { message: ['Source project is not a fork of the target project'] });
  assert.equal((await api('DELETE', `/projects/${fork.id}/fork`, contribToken)).statusCode, 304);
  const member = await t.db.selectFrom('fork_network_members').select('project_id').where('project_id', '=', fork.id).executeTakeFirst();
  assert.equal(member, undefined);
});

test('deleting a fork, the group holding it or its owner closes its open requests into the upstream', async () => {
  const up = await newProject('delete-up', ownerToken);
  const fork = await forkOf(up.id, thirdToken, 'delete-fork');
  await branchWithCommit(fork.id, 'gone', thirdToken);
  const r = await openRequest(fork.id, up.id, 'gone', thirdToken);
  assert.equal(r.statusCode, 201, r.body);
  assert.equal((await api('DELETE', `/projects/${fork.id}`, thirdToken)).statusCode, 202);
  const closed = await ok('GET', `/projects/${up.id}/merge_requests/${r.json().iid}`, ownerToken);
  assert.equal(closed.state, 'closed');
  assert.equal(closed.closed_by.username, 'netthird');
  assert.equal(closed.source_project_id, null);
  assert.equal((await stateEvents(r.json().id)).length, 1);

  // A group's deletion destroys each of its projects the same way.
  const group = await ok('POST', '/groups', ROOT_TOKEN, { name: 'Doomed forks', path: 'doomed-forks', visibility: 'public' });
  await ok('POST', `/groups/${group.id}/members`, ROOT_TOKEN, { user_id: contrib.id, access_level: 50 });
  const inGroup = await ok('POST', `/projects/${up.id}/fork`, contribToken, { namespace_id: group.id, path: 'grouped', name: 'grouped' });
  await waitFor('the grouped fork', async () => {
    const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', inGroup.id).executeTakeFirstOrThrow();
    return row.import_status === 'finished' ? true : undefined;
  }, 30_000);
  await branchWithCommit(inGroup.id, 'grouped', contribToken);
  const fromGroup = await openRequest(inGroup.id, up.id, 'grouped', contribToken);
  assert.equal(fromGroup.statusCode, 201, fromGroup.body);
  assert.equal((await api('DELETE', `/groups/${group.id}`, contribToken)).statusCode, 202);
  const closedToo = await ok('GET', `/projects/${up.id}/merge_requests/${fromGroup.json().iid}`, ownerToken);
  assert.equal(closedToo.state, 'closed');
  assert.equal(closedToo.closed_by.username, 'netcontrib');

  // And a user's deletion destroys their personal projects the same way (closed by the administrator).
  const leaver = await createUser(t.db, { username: 'netleaver' });
  const leaverToken = await createToken(t.db, leaver);
  const theirs = await forkOf(up.id, leaverToken, 'leaver-fork');
  await branchWithCommit(theirs.id, 'leaving', leaverToken);
  const fromLeaver = await openRequest(theirs.id, up.id, 'leaving', leaverToken);
  assert.equal(fromLeaver.statusCode, 201, fromLeaver.body);
  assert.equal((await api('DELETE', `/users/${leaver.id}`, ROOT_TOKEN)).statusCode, 204);
  const closedByAdmin = await ok('GET', `/projects/${up.id}/merge_requests/${fromLeaver.json().iid}`, ownerToken);
  assert.equal(closedByAdmin.state, 'closed');
  assert.equal(closedByAdmin.closed_by.username, 'root');
});

test('the forks of a deleted root stay one network: requests between them, /forks, no forked_from', async () => {
  const root = await newProject('net-root', ownerToken);
  const a = await forkOf(root.id, contribToken, 'net-a');
  const b = await forkOf(root.id, thirdToken, 'net-b');
  const c = await forkOf(a.id, ownerToken, 'net-c');
  const outsider = await newProject('net-outsider', ownerToken);
  await branchWithCommit(b.id, 'from-b', thirdToken);
  await branchWithCommit(outsider.id, 'from-out', ownerToken);

  assert.equal((await api('DELETE', `/projects/${root.id}`, ownerToken)).statusCode, 202);
  for (const id of [a.id, b.id]) {
    const shown = await ok('GET', `/projects/${id}`, ROOT_TOKEN);
    // ProjectDetails exposes forked_from_project only when its source is readable: gone, it is left out.
    assert.equal(shown.forked_from_project, undefined);
  }
  assert.equal((await ok('GET', `/projects/${c.id}`, ROOT_TOKEN)).forked_from_project.id, a.id);
  assert.deepEqual((await ok('GET', `/projects/${a.id}/forks`, ROOT_TOKEN)).map((p: { id: number }) => p.id), [c.id]);
  // b and a still share the network: a request from b into a (and into a's fork c) is allowed.
  const bToA = await openRequest(b.id, a.id, 'from-b', thirdToken);
  assert.equal(bToA.statusCode, 201, bToA.body);
  assert.equal(bToA.json().source_project_id, b.id);
  assert.equal(bToA.json().target_project_id, a.id);
  const bToC = await openRequest(b.id, c.id, 'from-b', thirdToken);
  assert.equal(bToC.statusCode, 201, bToC.body);
  const out = await openRequest(outsider.id, a.id, 'from-out', ownerToken);
  assert.equal(out.statusCode, 422, out.body);
  const members = await t.db.selectFrom('fork_network_members')
    .innerJoin('fork_networks', 'fork_networks.id', 'fork_network_members.fork_network_id')
    .select(['fork_network_members.project_id', 'fork_networks.id as network', 'fork_networks.root_project_id'])
    .where('fork_network_members.project_id', 'in', [a.id, b.id, c.id]).execute();
  assert.equal(members.length, 3);
  assert.equal(new Set(members.map((m) => m.network)).size, 1);
  assert.equal(members[0].root_project_id, null);
});

test('a transferred fork stays in its network; linking joins one, unlinking a middle fork keeps its forks in it', async () => {
  const root = await newProject('move-root', ownerToken);
  const a = await forkOf(root.id, contribToken, 'move-a');
  const group = await ok('POST', '/groups', ROOT_TOKEN, { name: 'Forkers', path: 'forkers', visibility: 'public' });
  await ok('POST', `/groups/${group.id}/members`, ROOT_TOKEN, { user_id: contrib.id, access_level: 50 });
  await ok('PUT', `/projects/${a.id}/transfer`, contribToken, { namespace: String(group.id) });
  await branchWithCommit(a.id, 'moved', contribToken);
  const afterMove = await openRequest(a.id, root.id, 'moved', contribToken);
  assert.equal(afterMove.statusCode, 201, afterMove.body);

  // Linking an existing project makes it a member of its new source's network.
  const linked = await newProject('move-linked', thirdToken);
  assert.equal((await api('POST', `/projects/${linked.id}/fork/${a.id}`, thirdToken)).statusCode, 201);
  await branchWithCommit(linked.id, 'linked', thirdToken);
  const linkedToRoot = await openRequest(linked.id, root.id, 'linked', thirdToken);
  assert.equal(linkedToRoot.statusCode, 201, linkedToRoot.body);

  // a leaves: its fork `linked` no longer names it as source but stays with the root's network.
  assert.equal((await api('DELETE', `/projects/${a.id}/fork`, contribToken)).statusCode, 204);
  assert.equal((await ok('GET', `/projects/${root.id}/merge_requests/${afterMove.json().iid}`, ownerToken)).state, 'closed');
  assert.equal((await ok('GET', `/projects/${root.id}/merge_requests/${linkedToRoot.json().iid}`, ownerToken)).state, 'opened');
  assert.equal((await ok('GET', `/projects/${linked.id}`, ROOT_TOKEN)).forked_from_project, undefined);
  await ok('PUT', `/projects/${root.id}/merge_requests/${linkedToRoot.json().iid}`, ownerToken, { state_event: 'close' });
  const stillIn = await openRequest(linked.id, root.id, 'linked', thirdToken);
  assert.equal(stillIn.statusCode, 201, stillIn.body);
});
