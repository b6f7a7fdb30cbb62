/**
 * What the instance settings change in kiln (issue 35, item 8; README, Compatibility lists them):
 * new users' projects limit and external flag, new repositories' branch, default visibilities and
 * the administrator's restrictions on projects, groups and snippets, shared runners of new
 * projects, git over HTTP, password sign-in (web page and OAuth password grant), session length,
 * users' OAuth applications, SSH key restrictions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { postForm, signedInBrowser } from '../helpers/oauth.ts';
import { sshPublicKey } from '../helpers/keys.ts';
import { hashPassword } from '../../src/domain/users/password.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';
import type { UserRow } from '../../src/db/types.ts';

const PASSWORD = 'a long enough password';

describe('settings that change what kiln does', () => {
  let t: TestApp;
  let user: UserRow;
  let token: string;
  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db, { encrypted_password: await hashPassword(PASSWORD) });
    token = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const settings = async (payload: object) => {
    const r = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload });
    assert.equal(r.statusCode, 200, r.body);
  };
  let seq = 0;
  const newUser = (payload: object = {}) => {
    seq += 1;
    return t.request({
      method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN,
      payload: { email: `u${seq}@corp.example`, username: `effects-${seq}`, name: 'U', password: PASSWORD, ...payload },
    });
  };

  it('gives new users default_projects_limit and user_default_external (unless user_default_internal_regex matches)', async () => {
    await settings({ default_projects_limit: 7, user_default_external: true, user_default_internal_regex: '@corp\\.example$' });
    const internal = await newUser();
    assert.equal(internal.statusCode, 201, internal.body);
    assert.deepEqual([internal.json().projects_limit, internal.json().external], [7, false]);
    const outside = await newUser({ email: 'someone@else.example' });
    assert.deepEqual([outside.json().external, outside.json().projects_limit], [true, 0]);
    const named = await newUser({ email: 'named@else.example', external: false, projects_limit: 3 });
    assert.deepEqual([named.json().external, named.json().projects_limit], [false, 3]);
    // Made internal again, a user takes the instance's limit back.
    const back = await t.request({ method: 'PUT', url: `/api/v4/users/${outside.json().id}`, token: ROOT_TOKEN, payload: { external: false } });
    assert.equal(back.json().projects_limit, 7);
    await settings({ default_projects_limit: 100_000, user_default_external: false, user_default_internal_regex: '' });
  });

  it('starts new repositories on default_branch_name unless the project names a branch', async () => {
    await settings({ default_branch_name: 'trunk' });
    const readme = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'trunked', initialize_with_readme: true } });
    assert.equal(readme.json().default_branch, 'trunk');
    const empty = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'empty-trunk' } });
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', empty.json().id).executeTakeFirstOrThrow();
    const head = execFileSync('git', ['--git-dir', repositoryPath(t.config.storages, row.repository_storage, row.disk_path), 'symbolic-ref', 'HEAD'], { encoding: 'utf8' });
    assert.equal(head.trim(), 'refs/heads/trunk');
    const named = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'named-branch', default_branch: 'dev', initialize_with_readme: true } });
    assert.equal(named.json().default_branch, 'dev');
    await settings({ default_branch_name: '' });
    const plain = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'mained', initialize_with_readme: true } });
    assert.equal(plain.statusCode, 201, plain.body);
    assert.equal(plain.json().default_branch, 'main');
  });

  it('creates projects, groups and snippets at the default visibilities, a project no more visible than its group', async () => {
    await settings({ default_project_visibility: 'internal', default_group_visibility: 'internal', default_snippet_visibility: 'internal' });
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'visible' } });
    assert.equal(project.json().visibility, 'internal');
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token, payload: { name: 'vis-group', path: 'vis-group' } });
    assert.equal(group.statusCode, 201, group.body);
    assert.equal(group.json().visibility, 'internal');
    const privateGroup = await t.request({ method: 'POST', url: '/api/v4/groups', token, payload: { name: 'closed', path: 'closed', visibility: 'private' } });
    const inside = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'inside', namespace_id: privateGroup.json().id } });
    assert.equal(inside.statusCode, 201, inside.body);
    assert.equal(inside.json().visibility, 'private');
    const snippet = await t.request({ method: 'POST', url: '/api/v4/snippets', token, payload: { title: 's', file_name: 'a.txt', content: 'b' } });
    assert.equal(snippet.json().visibility, 'internal');
    await settings({ default_project_visibility: 'private', default_group_visibility: 'private', default_snippet_visibility: 'private' });
  });

  it('refuses a restricted visibility to users who are not administrators, on create and on change', async () => {
    await settings({ restricted_visibility_levels: ['public'] });
    const restricted = { message: { visibility_level: ['Public has been restricted by your Service administrator'] } };
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'loud', visibility: 'public' } });
    assert.deepEqual([project.statusCode, project.json()], [400, restricted]);
    const quiet = (await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'quiet' } })).json();
    const raised = await t.request({ method: 'PUT', url: `/api/v4/projects/${quiet.id}`, token, payload: { visibility: 'public' } });
    assert.deepEqual([raised.statusCode, raised.json()], [400, restricted]);
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token, payload: { name: 'loud-group', path: 'loud-group', visibility: 'public' } });
    assert.deepEqual([group.statusCode, group.json()], [400, restricted]);
    const quietGroup = (await t.request({ method: 'POST', url: '/api/v4/groups', token, payload: { name: 'quiet-group', path: 'quiet-group' } })).json();
    const raisedGroup = await t.request({ method: 'PUT', url: `/api/v4/groups/${quietGroup.id}`, token, payload: { visibility: 'public' } });
    assert.deepEqual([raisedGroup.statusCode, raisedGroup.json()], [400, restricted]);
    const snippet = await t.request({ method: 'POST', url: '/api/v4/snippets', token, payload: { title: 's', file_name: 'a.txt', content: 'b', visibility: 'public' } });
    assert.deepEqual([snippet.statusCode, snippet.json()], [403, { message: { error: 'Visibility level Public has been restricted by your Service administrator' } }]);
    // Administrators may; what is not restricted stays open.
    const admin = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'admin-loud', visibility: 'public' } });
    assert.equal(admin.statusCode, 201, admin.body);
    const internal = await t.request({ method: 'PUT', url: `/api/v4/projects/${quiet.id}`, token, payload: { visibility: 'internal' } });
    assert.equal(internal.json().visibility, 'internal');
    await settings({ restricted_visibility_levels: [] });
  });

  it('gives new projects the instance\'s shared_runners_enabled', async () => {
    await settings({ shared_runners_enabled: false });
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'no-shared' } })).json().shared_runners_enabled, false);
    await settings({ shared_runners_enabled: true, shared_runners_text: 'Shared runners for everyone' });
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'shared' } })).json().shared_runners_enabled, true);
  });

  it('refuses git over HTTP while enabled_git_access_protocol is ssh', async () => {
    const project = (await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'ssh-only', visibility: 'internal' } })).json();
    const url = `/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`;
    const basic = `Basic ${Buffer.from(`${user.username}:${token}`).toString('base64')}`;
    assert.equal((await t.request({ url, headers: { authorization: basic } })).statusCode, 200);
    await settings({ enabled_git_access_protocol: 'ssh' });
    const refused = await t.request({ url, headers: { authorization: basic } });
    assert.deepEqual([refused.statusCode, refused.body], [403, 'Git access over HTTP is not allowed\n']);
    await settings({ enabled_git_access_protocol: 'nil' });
    assert.equal((await t.request({ url, headers: { authorization: basic } })).statusCode, 200);
  });

  it('turns password sign-in off: the OAuth password grant with password_authentication_enabled_for_git, the page with _for_web', async () => {
    const grant = () => postForm(t, '/oauth/token', { grant_type: 'password', username: user.username, password: PASSWORD });
    assert.equal((await grant()).statusCode, 200);
    await settings({ password_authentication_enabled_for_git: false });
    const refused = await grant();
    assert.deepEqual([refused.statusCode, refused.json().error], [400, 'invalid_grant']);
    await settings({ password_authentication_enabled_for_git: true });

    const signIn = async () => {
      const page = await t.request({ url: '/users/sign_in' });
      const csrf = page.cookies.find((c) => c.name === '_service_csrf')!;
      const authenticity = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
      return postForm(t, '/users/sign_in', { 'user[login]': user.username, 'user[password]': PASSWORD, authenticity_token: authenticity }, { cookie: `_service_csrf=${csrf.value}` });
    };
    await settings({ password_authentication_enabled_for_web: false });
    assert.equal((await signIn()).statusCode, 401);
    await settings({ password_authentication_enabled_for_web: true, session_expire_delay: 60 });
    const before = Date.now();
    const signedIn = await signIn();
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const session = await t.db.selectFrom('sessions').select('expires_at').where('user_id', '=', user.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    const lasts = Date.parse(session.expires_at) - before;
    assert.ok(lasts > 59 * 60_000 && lasts <= 61 * 60_000, `session lasts ${lasts} ms`);
    await settings({ session_expire_delay: 10_080 });
  });

  it('keeps users who are not administrators from registering OAuth applications while user_oauth_applications is off', async () => {
    const browser = await signedInBrowser(t, user);
    const register = () => postForm(t, '/profile/applications', {
      authenticity_token: browser.csrf, 'doorkeeper_application[name]': 'app', 'doorkeeper_application[redirect_uri]': 'https://app.example/cb',
      'doorkeeper_application[scopes][]': 'api',
    }, { cookie: browser.cookie });
    await settings({ user_oauth_applications: false });
    assert.equal((await register()).statusCode, 403);
    await settings({ user_oauth_applications: true });
    assert.equal((await register()).statusCode, 201);
  });

  it('holds SSH keys to the key restrictions', async () => {
    await settings({ rsa_key_restriction: 4096, ed25519_key_restriction: -1, dsa_key_restriction: -1 });
    const add = (key: string) => t.request({ method: 'POST', url: '/api/v4/user/keys', token, payload: { title: 'k', key } });
    const small = await add(sshPublicKey('rsa'));
    assert.deepEqual([small.statusCode, small.json()], [400, { message: { key: ['must be at least 4096 bits'] } }]);
    const forbidden = await add(sshPublicKey('ed25519'));
    assert.deepEqual(forbidden.json(), { message: { key: ['type is forbidden. Must be RSA, ECDSA, ECDSA_SK, or ED25519_SK'] } });
    assert.equal((await add(sshPublicKey('ecdsa'))).statusCode, 201);
    await settings({ rsa_key_restriction: 0, ed25519_key_restriction: 0, dsa_key_restriction: 0 });
    assert.equal((await add(sshPublicKey('ed25519'))).statusCode, 201);
  });
});
