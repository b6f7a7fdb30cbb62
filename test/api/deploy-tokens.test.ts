/**
 * Deploy tokens (issue 31, item 3): the Service's API for project, group and instance lists with
 * its permissions and messages (python-gitlab's tests/functional/api/test_deploy_tokens.py
 * expectations too), real `git clone`s over HTTP with a token's username and secret (refused when
 * expired, revoked, outside its project or group, or without read_repository; never a push), and a
 * project's `gitlab-deploy-token` reaching its jobs as CI_DEPLOY_USER / CI_DEPLOY_PASSWORD.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { cloneUrl, git, startListeningApp, tempDir } from '../helpers/git.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { digest } from '../../src/domain/tokens/secret.ts';

const CONFIG = 'build:\n  script: echo hello\n';

describe('deploy tokens', () => {
  let t: TestApp & { baseUrl: string };
  let work: string;
  let p: CiProject;
  let other: CiProject;
  let maintainerToken: string;
  let developerToken: string;
  let groupId: number;
  let groupProjectPath: string;
  let groupProjectId: number;
  let groupOwnerToken: string;
  let groupMaintainerToken: string;

  async function member(url: string, level: number): Promise<string> {
    const u = await createUser(t.db);
    const res = await t.request({ method: 'POST', url, token: ROOT_TOKEN, payload: { user_id: u.id, access_level: level } });
    assert.equal(res.statusCode, 201, res.body);
    return createToken(t.db, u, { scopes: ['api'] });
  }

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    work = await tempDir();
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'README.md': '# deployed\n' });
    other = await createCiProject(t);
    await pushFiles(t, other, { 'README.md': '# other\n' });
    maintainerToken = await member(`/api/v4/projects/${p.project.id}/members`, 40);
    developerToken = await member(`/api/v4/projects/${p.project.id}/members`, 30);

    let res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Deploy Group', path: 'deploy-group' } });
    assert.equal(res.statusCode, 201, res.body);
    groupId = res.json().id;
    res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Sub', path: 'sub', parent_id: groupId } });
    assert.equal(res.statusCode, 201, res.body);
    res = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN,
      payload: { name: 'in-sub', namespace_id: res.json().id, initialize_with_readme: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    groupProjectPath = res.json().path_with_namespace;
    groupProjectId = res.json().id;
    groupOwnerToken = await member(`/api/v4/groups/${groupId}/members`, 50);
    groupMaintainerToken = await member(`/api/v4/groups/${groupId}/members`, 40);
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  const projectUrl = (suffix = '') => `/api/v4/projects/${p.project.id}/deploy_tokens${suffix}`;

  async function createProjectToken(payload: Record<string, unknown>, project = p) {
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${project.project.id}/deploy_tokens`, token: ROOT_TOKEN, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; username: string; token: string; name: string };
  }

  let cloneSeq = 0;
  async function clone(fullPath: string, username: string, password: string) {
    cloneSeq += 1;
    return git(['clone', '-q', cloneUrl(t.baseUrl, fullPath, { username, password }), path.join(work, `clone-${cloneSeq}`)], work);
  }

  it('creates, lists, shows and deletes a project token for Maintainers, the secret only in the creation', async () => {
    let res = await t.request({
      method: 'POST', url: projectUrl(), token: maintainerToken,
      payload: { name: 'foo', username: 'bar', expires_at: '2022-01-01', scopes: ['read_registry'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.deepEqual(Object.keys(created).sort(), ['expired', 'expires_at', 'id', 'name', 'revoked', 'scopes', 'token', 'username']);
    assert.deepEqual({ ...created, id: 0, token: '' }, {
      id: 0, name: 'foo', username: 'bar', expires_at: '2022-01-01T00:00:00.000Z', scopes: ['read_registry'],
      revoked: false, expired: true, token: '',
    });
    const row = await t.db.selectFrom('deploy_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, digest(created.token));
    assert.equal(row.token_sealed, null);
    assert.equal(row.project_id, p.project.id);
    assert.equal(row.deploy_token_type, 'project_type');

    // Comma-separated scopes, the default username, no expiry.
    res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'second', scopes: 'write_registry,read_repository' } });
    assert.equal(res.statusCode, 201, res.body);
    const second = res.json();
    assert.equal(second.username, `gitlab+deploy-token-${second.id}`);
    assert.deepEqual(second.scopes, ['read_repository', 'write_registry']);
    assert.equal(second.expires_at, null);
    assert.equal(second.expired, false);

    res = await t.request({ url: projectUrl(), token: maintainerToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((x: { id: number }) => x.id), [created.id, second.id]);
    assert.ok(res.json().every((x: Record<string, unknown>) => !('token' in x)));
    res = await t.request({ url: projectUrl('?active=true'), token: maintainerToken });
    assert.deepEqual(res.json().map((x: { id: number }) => x.id), [second.id]);
    res = await t.request({ url: projectUrl(`/${created.id}`), token: maintainerToken });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().name, 'foo');
    assert.equal(res.json().token, undefined);

    // The instance's list is the administrators'.
    res = await t.request({ url: '/api/v4/deploy_tokens', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const all = res.json().map((x: { id: number }) => x.id);
    assert.ok(all.includes(created.id) && all.includes(second.id));
    res = await t.request({ url: '/api/v4/deploy_tokens?active=true', token: ROOT_TOKEN });
    assert.ok(!res.json().some((x: { id: number }) => x.id === created.id));
    res = await t.request({ url: '/api/v4/deploy_tokens', token: maintainerToken });
    assert.equal(res.statusCode, 403);

    // Developers may not see or make them; strangers do not see the project.
    res = await t.request({ url: projectUrl(), token: developerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'POST', url: projectUrl(), token: developerToken, payload: { name: 'x', scopes: ['read_repository'] } });
    assert.equal(res.statusCode, 403);
    res = await t.request({ url: projectUrl(), token: groupOwnerToken });
    assert.equal(res.statusCode, 404);
    res = await t.request({ url: projectUrl() });
    assert.equal(res.statusCode, 401);

    res = await t.request({ method: 'DELETE', url: projectUrl(`/${created.id}`), token: developerToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'DELETE', url: projectUrl(`/${created.id}`), token: maintainerToken });
    assert.equal(res.statusCode, 204);
    res = await t.request({ url: projectUrl(`/${created.id}`), token: maintainerToken });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    res = await t.request({ method: 'DELETE', url: projectUrl(`/${created.id}`), token: maintainerToken });
    assert.equal(res.statusCode, 404);
    res = await t.request({ url: '/api/v4/deploy_tokens', token: ROOT_TOKEN });
    assert.ok(!res.json().some((x: { id: number }) => x.id === created.id));
    // Another project's token is not this one's.
    const foreign = await createProjectToken({ name: 'theirs', scopes: ['read_repository'] }, other);
    res = await t.request({ url: projectUrl(`/${foreign.id}`), token: maintainerToken });
    assert.equal(res.statusCode, 404);
  });

  it('answers bad input in the Service\'s words', async () => {
    let res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "scopes" not given' }]);
    res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { scopes: ['read_repository'] } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "name" not given' }]);
    res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'x', scopes: ['api'] } });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error, /^scopes /);
    res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'x', scopes: [] } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: "Scopes can't be blank" }]);
    res = await t.request({ method: 'POST', url: `${projectUrl()}?name=x&scopes=`, token: maintainerToken });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: "Scopes can't be blank" }]);
    res = await t.request({
      method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'n'.repeat(256), username: 'with space', scopes: ['read_repository'] },
    });
    assert.deepEqual([res.statusCode, res.json()], [400, {
      message: "Username can contain only letters, digits, '_', '-', '+', and '.' and Name is too long (maximum is 255 characters)",
    }]);
    res = await t.request({ method: 'POST', url: projectUrl(), token: maintainerToken, payload: { name: 'x', scopes: ['read_repository'], expires_at: 'soon' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'expires_at is invalid' }]);
  });

  it('lets group Maintainers read and Owners create and delete group tokens', async () => {
    const url = `/api/v4/groups/${groupId}/deploy_tokens`;
    let res = await t.request({ method: 'POST', url, token: groupMaintainerToken, payload: { name: 'foo', scopes: ['read_registry'] } });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url, token: groupOwnerToken, payload: { name: 'foo', scopes: ['read_registry'] } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.equal(created.username, `gitlab+deploy-token-${created.id}`);
    const row = await t.db.selectFrom('deploy_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.deploy_token_type, row.group_id, row.project_id], ['group_type', groupId, null]);

    res = await t.request({ url, token: groupMaintainerToken });
    assert.deepEqual([res.statusCode, res.json().map((x: { id: number }) => x.id)], [200, [created.id]]);
    res = await t.request({ url: `${url}/${created.id}`, token: groupMaintainerToken });
    assert.deepEqual([res.statusCode, res.json().scopes], [200, ['read_registry']]);
    res = await t.request({ url: `/api/v4/groups/deploy-group/deploy_tokens/${created.id}`, token: groupOwnerToken });
    assert.equal(res.json().name, 'foo');
    res = await t.request({ url, token: maintainerToken });
    assert.equal(res.statusCode, 404);
    res = await t.request({ method: 'DELETE', url: `${url}/${created.id}`, token: groupMaintainerToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'DELETE', url: `${url}/${created.id}`, token: groupOwnerToken });
    assert.equal(res.statusCode, 204);
    res = await t.request({ url, token: groupOwnerToken });
    assert.deepEqual(res.json(), []);
  });

  it('clones with a read_repository token over HTTP, only its own project, never pushing', async () => {
    const token = await createProjectToken({ name: 'ci clone', scopes: ['read_repository'] });
    const cloned = await clone(p.fullPath, token.username, token.token);
    assert.equal(cloned.code, 0, cloned.stderr);
    const dir = path.join(work, `clone-${cloneSeq}`);
    assert.equal(await fs.readFile(path.join(dir, 'README.md'), 'utf8'), '# deployed\n');

    // No push: deploy tokens have no write_repository in 15.2.
    await fs.writeFile(path.join(dir, 'new.txt'), 'x\n');
    await git(['add', 'new.txt'], dir);
    await git(['-c', 'user.name=D', '-c', 'user.email=d@example.com', 'commit', '-q', '-m', 'try'], dir);
    const pushed = await git(['push', '-q', 'origin', 'HEAD:refs/heads/deployed'], dir);
    assert.notEqual(pushed.code, 0);
    assert.match(pushed.stderr, /You are not allowed to push code to this project\./);

    // The username must be the token's; another project is out of reach (not authenticated there).
    let refused = await clone(p.fullPath, 'someone-else', token.token);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /HTTP Basic: Access denied|Authentication failed/);
    refused = await clone(other.fullPath, token.username, token.token);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /HTTP Basic: Access denied|Authentication failed/);

    // Without read_repository it authenticates but may not download.
    const registryOnly = await createProjectToken({ name: 'registry', scopes: ['read_registry'] });
    refused = await clone(p.fullPath, registryOnly.username, registryOnly.token);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /You are not allowed to download code from this project\./);

    // Raw answers: 401 with the challenge for a revoked or an expired token.
    const info = `/${p.fullPath}.git/info/refs?service=git-upload-pack`;
    const basic = (u: string, s: string) => `Basic ${Buffer.from(`${u}:${s}`).toString('base64')}`;
    let res = await fetch(`${t.baseUrl}${info}`, { headers: { authorization: basic(token.username, token.token) } });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    await t.db.updateTable('deploy_tokens').set({ revoked: 1 }).where('id', '=', token.id).execute();
    res = await fetch(`${t.baseUrl}${info}`, { headers: { authorization: basic(token.username, token.token) } });
    assert.equal(res.status, 401);
    assert.equal(await res.text(), 'HTTP Basic: Access denied\n');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
    refused = await clone(p.fullPath, token.username, token.token);
    assert.notEqual(refused.code, 0);

    const expiring = await createProjectToken({ name: 'expiring', scopes: ['read_repository'] });
    assert.equal((await clone(p.fullPath, expiring.username, expiring.token)).code, 0);
    await t.db.updateTable('deploy_tokens').set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
      .where('id', '=', expiring.id).execute();
    res = await fetch(`${t.baseUrl}${info}`, { headers: { authorization: basic(expiring.username, expiring.token) } });
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    refused = await clone(p.fullPath, expiring.username, expiring.token);
    assert.notEqual(refused.code, 0);
  });

  it('lets a group token clone the projects under its group and its subgroups', async () => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/groups/${groupId}/deploy_tokens`, token: groupOwnerToken,
      payload: { name: 'group clone', username: 'group-deployer', scopes: ['read_repository'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const token = res.json();
    const cloned = await clone(groupProjectPath, 'group-deployer', token.token);
    assert.equal(cloned.code, 0, cloned.stderr);
    let refused = await clone(p.fullPath, 'group-deployer', token.token);
    assert.notEqual(refused.code, 0);
    // Nothing is reachable with a deploy token once the project's repository is disabled.
    await t.db.updateTable('projects').set({ repository_access_level: 0 }).where('id', '=', groupProjectId).execute();
    refused = await clone(groupProjectPath, 'group-deployer', token.token);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /HTTP Basic: Access denied|Authentication failed/);
    await t.db.updateTable('projects').set({ repository_access_level: 20 }).where('id', '=', groupProjectId).execute();
  });

  it('gives the project\'s gitlab-deploy-token to its jobs as CI_DEPLOY_USER and CI_DEPLOY_PASSWORD', async () => {
    const runner = await TestRunner.register(t);
    // Without such a token the job has no such variables.
    await createPipeline(t, p);
    let job = await runner.requestJob();
    assert.ok(!job.variables.some((v) => v.key === 'CI_DEPLOY_USER' || v.key === 'CI_DEPLOY_PASSWORD'));
    await runner.update(job, 'success');

    const token = await createProjectToken({ name: 'gitlab-deploy-token', scopes: ['read_repository', 'read_registry'] });
    const row = await t.db.selectFrom('deploy_tokens').selectAll().where('id', '=', token.id).executeTakeFirstOrThrow();
    assert.ok(row.token_sealed !== null && !row.token_sealed.includes(token.token));
    await createPipeline(t, p);
    job = await runner.requestJob();
    const user = job.variables.find((v) => v.key === 'CI_DEPLOY_USER');
    const password = job.variables.find((v) => v.key === 'CI_DEPLOY_PASSWORD');
    assert.deepEqual(user, { key: 'CI_DEPLOY_USER', value: token.username, public: true, masked: false });
    assert.deepEqual(password, { key: 'CI_DEPLOY_PASSWORD', value: token.token, public: false, masked: true });
    // What the job gets clones the project.
    const cloned = await clone(p.fullPath, user!.value, password!.value);
    assert.equal(cloned.code, 0, cloned.stderr);
    await runner.update(job, 'success');

    // A revoked one is no longer given.
    await t.db.updateTable('deploy_tokens').set({ revoked: 1 }).where('id', '=', token.id).execute();
    await createPipeline(t, p);
    job = await runner.requestJob();
    assert.ok(!job.variables.some((v) => v.key === 'CI_DEPLOY_USER'));
    await runner.update(job, 'success');
  });
});
