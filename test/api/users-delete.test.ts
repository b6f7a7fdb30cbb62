/**
 * What goes with a deleted user (spec, Users DELETE; reference §1.7): the repositories of their
 * personal projects and snippets, removed after the rows; with hard_delete the groups they solely
 * own, with sub-groups, projects and wiki repositories; other users' memberships of all of it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('deleting a user removes what goes with them', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const repo = (diskPath: string) => path.join(t.dataDir, 'repositories', diskPath);
  const exists = async (p: string) => fs.stat(p).then(() => true, () => false);
  const post = async (token: string, url: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const deleteUser = (user: UserRow, query = '') => t.request({ method: 'DELETE', url: `/api/v4/users/${user.id}${query}`, token: ROOT_TOKEN });
  const projectRow = (id: number) => t.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  const membersOf = (type: 'Project' | 'Namespace', id: number) => t.db.selectFrom('members').select('user_id')
    .where('source_type', '=', type).where('source_id', '=', id).execute();

  async function userWithToken(): Promise<{ user: UserRow; token: string }> {
    const user = await createUser(t.db);
    return { user, token: await createToken(t.db, user) };
  }

  it('removes the repositories of personal projects and snippets, and others\' memberships of those projects', async () => {
    const { user, token } = await userWithToken();
    const other = await userWithToken();
    const project = await post(token, '/projects', { name: 'Mine', initialize_with_readme: true });
    const snippet = await post(token, '/snippets', { title: 'S', file_name: 's.txt', content: 's\n', visibility: 'private' });
    await post(token, `/projects/${project.id}/members`, { user_id: other.user.id, access_level: 30 });
    // A project of someone else in which the user is a member stays, repository and all.
    const kept = await post(other.token, '/projects', { name: 'Kept' });
    await post(other.token, `/projects/${kept.id}/members`, { user_id: user.id, access_level: 40 });
    const projectDisk = (await projectRow(project.id))!.disk_path;
    const keptDisk = (await projectRow(kept.id))!.disk_path;
    const snippetDisk = (await t.db.selectFrom('snippets').select('disk_path').where('id', '=', snippet.id).executeTakeFirstOrThrow()).disk_path;
    assert.ok(await exists(repo(projectDisk)));
    assert.ok(await exists(repo(snippetDisk)));

    assert.equal((await deleteUser(user)).statusCode, 204);
    assert.equal(await projectRow(project.id), undefined);
    assert.equal(await t.db.selectFrom('snippets').select('id').where('id', '=', snippet.id).executeTakeFirst(), undefined);
    assert.equal(await exists(repo(projectDisk)), false);
    assert.equal(await exists(repo(snippetDisk)), false);
    assert.deepEqual(await membersOf('Project', project.id), []);
    assert.ok(await projectRow(kept.id));
    assert.ok(await exists(repo(keptDisk)));
    assert.deepEqual((await membersOf('Project', kept.id)).map((m) => m.user_id), [other.user.id]);
    // The other user's memberships list no longer names the deleted project.
    const memberships = (await t.request({ url: `/api/v4/users/${other.user.id}/memberships`, token: ROOT_TOKEN })).json();
    assert.deepEqual(memberships.map((m: { source_id: number }) => m.source_id), [kept.id]);
  });

  it('hard_delete also removes solely owned groups with their sub-groups, projects and wiki repositories', async () => {
    const { user, token } = await userWithToken();
    const member = await userWithToken();
    const group = await post(token, '/groups', { name: 'Solo Team', path: 'solo-team' });
    const sub = await post(token, '/groups', { name: 'Inner', path: 'inner', parent_id: group.id });
    const project = await post(token, '/projects', { name: 'Deep', namespace_id: sub.id, initialize_with_readme: true });
    await post(token, `/groups/${group.id}/members`, { user_id: member.user.id, access_level: 30 });
    await post(token, `/projects/${project.id}/members`, { user_id: member.user.id, access_level: 40 });
    // A group the user owns together with someone else survives.
    const shared = await post(token, '/groups', { name: 'Shared', path: 'shared-team' });
    await post(token, `/groups/${shared.id}/members`, { user_id: member.user.id, access_level: 50 });
    const projectDisk = (await projectRow(project.id))!.disk_path;
    assert.ok(await exists(repo('solo-team.wiki.git')));
    assert.ok(await exists(repo('solo-team/inner.wiki.git')));
    assert.ok(await exists(repo(projectDisk)));

    const soft = await deleteUser(user);
    assert.equal(soft.statusCode, 409);
    assert.deepEqual(soft.json(), { message: 'User cannot be removed while is the sole-owner of a group' });
    assert.ok(await exists(repo('solo-team.wiki.git')));

    assert.equal((await deleteUser(user, '?hard_delete=true')).statusCode, 204);
    const groups = await t.db.selectFrom('namespaces').select('id').where('id', 'in', [group.id, sub.id, shared.id]).execute();
    assert.deepEqual(groups.map((g) => g.id), [shared.id]);
    assert.equal(await projectRow(project.id), undefined);
    assert.deepEqual(await membersOf('Namespace', group.id), []);
    assert.deepEqual(await membersOf('Project', project.id), []);
    assert.deepEqual((await membersOf('Namespace', shared.id)).map((m) => m.user_id), [member.user.id]);
    assert.equal(await exists(repo('solo-team.wiki.git')), false);
    assert.equal(await exists(repo('solo-team/inner.wiki.git')), false);
    assert.equal(await exists(repo(projectDisk)), false);
    assert.ok(await exists(repo('shared-team.wiki.git')));
    assert.equal((await t.request({ url: '/api/v4/groups/solo-team', token: ROOT_TOKEN })).statusCode, 404);
  });

  it('counts owners of parent groups: a sub-group with an inherited owner is not solely owned', async () => {
    const parentOwner = await userWithToken();
    const { user } = await userWithToken();
    const parent = await post(parentOwner.token, '/groups', { name: 'Parent', path: 'parent-team' });
    const sub = await post(parentOwner.token, '/groups', { name: 'Child', path: 'child', parent_id: parent.id });
    await post(parentOwner.token, `/groups/${sub.id}/members`, { user_id: user.id, access_level: 50 });
    await t.db.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', '=', sub.id)
      .where('user_id', '=', parentOwner.user.id).execute();
    // The user is the sub-group's only direct owner, but the parent's owner owns it too.
    assert.equal((await deleteUser(user)).statusCode, 204);
    assert.ok(await t.db.selectFrom('namespaces').select('id').where('id', '=', sub.id).executeTakeFirst());
    assert.ok(await exists(repo('parent-team/child.wiki.git')));
  });

  it('a soft delete keeps groups and moves nothing it should not', async () => {
    const { user, token } = await userWithToken();
    const other = await userWithToken();
    const group = await post(other.token, '/groups', { name: 'Host', path: 'host-team' });
    await post(other.token, `/groups/${group.id}/members`, { user_id: user.id, access_level: 40 });
    const inGroup = await post(token, '/projects', { name: 'Contributed', namespace_id: group.id });
    assert.equal((await deleteUser(user)).statusCode, 204);
    // A project the user created in someone's group is the group's: it stays, creator cleared.
    const row = await projectRow(inGroup.id);
    assert.ok(row);
    assert.equal(row.creator_id, null);
    assert.ok(await exists(repo(row.disk_path)));
    assert.deepEqual((await membersOf('Namespace', group.id)).map((m) => m.user_id), [other.user.id]);
  });
  it('hands the pipelines and jobs a user started to the ghost user; hard_delete clears them', async () => {
    const host = await userWithToken();
    const group = await post(host.token, '/groups', { name: 'CI Host', path: 'ci-host' });
    const project = await post(host.token, '/projects', { name: 'Built', namespace_id: group.id });
    const runBy = async (user: UserRow) => {
      const now = new Date().toISOString();
      const pipeline = await t.db.insertInto('ci_pipelines').values({
        iid: user.id, project_id: project.id, ref: 'main', tag: 0, sha: 'a'.repeat(40), before_sha: '0'.repeat(40), source: 'api',
        status: 'success', user_id: user.id, upstream_bridge_id: null, config_path: '.gitlab-ci.yml', commit_data: '{}',
        created_at: now, updated_at: now, started_at: null, finished_at: null,
      }).returning('id').executeTakeFirstOrThrow();
      const job = await t.db.insertInto('ci_builds').values({
        type: 'build', project_id: project.id, pipeline_id: pipeline.id, name: 'test', stage: 'test', stage_idx: 0, status: 'success',
        run_when: 'on_success', allow_failure: 0, failure_reason: null, ref: 'main', tag: 0, user_id: user.id, runner_id: null,
        token_digest: null, options: '{}', yaml_variables: '[]', job_variables: '[]', tag_list: '', needs: null, timeout: 3600,
        downstream_pipeline_id: null, created_at: now, updated_at: now, queued_at: null, started_at: null, finished_at: null,
        erased_at: null, artifacts_expire_at: null,
      }).returning('id').executeTakeFirstOrThrow();
      return { pipelineId: pipeline.id, jobId: job.id };
    };
    const startedBy = async (ids: { pipelineId: number; jobId: number }) => [
      (await t.db.selectFrom('ci_pipelines').select('user_id').where('id', '=', ids.pipelineId).executeTakeFirstOrThrow()).user_id,
      (await t.db.selectFrom('ci_builds').select('user_id').where('id', '=', ids.jobId).executeTakeFirstOrThrow()).user_id,
    ];
    const soft = await createUser(t.db);
    const hard = await createUser(t.db);
    const softRuns = await runBy(soft);
    const hardRuns = await runBy(hard);
    assert.equal((await deleteUser(soft)).statusCode, 204);
    const ghost = await t.db.selectFrom('users').select('id').where('user_type', '=', 5).executeTakeFirstOrThrow();
    assert.deepEqual(await startedBy(softRuns), [ghost.id, ghost.id]);
    assert.equal((await deleteUser(hard, '?hard_delete=true')).statusCode, 204);
    assert.deepEqual(await startedBy(hardRuns), [null, null]);
  });
});
