/**
 * Project and group access tokens (issue 16, item 3): a bot user per token, a member of its
 * project or group at the token's level; the token works with PRIVATE-TOKEN and Bearer on the API
 * and for git, only within its project or group and level; revoking removes the bot. Refusals
 * as the Service answers them (issue 35 item 9): 401 on reads, 400 with the service's message on
 * create and revoke, each attempt audited.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { cloneUrl, git, startListeningApp, tempDir } from '../helpers/git.ts';
import type { TestApp } from '../helpers/app.ts';

describe('project and group access tokens', () => {
  let t: TestApp & { baseUrl: string };
  let work: string;
  let owner: UserRow;
  let ownerToken: string;
  let project: { id: number; path_with_namespace: string };
  let other: { id: number };
  const tokens: Record<string, string> = {};

  before(async () => {
    t = await startListeningApp();
    work = await tempDir();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
    project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Botted', initialize_with_readme: true } })).json();
    other = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Elsewhere' } })).json();
    for (const [role, level] of [['developer', 30], ['maintainer', 40]] as const) {
      const u = await createUser(t.db);
      tokens[role] = await createToken(t.db, u);
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: { user_id: u.id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  const create = (payload: object, token = tokens.maintainer, base = `/api/v4/projects/${project.id}`) =>
    t.request({ method: 'POST', url: `${base}/access_tokens`, token, payload });
  const answer = (res: { statusCode: number; json: () => unknown }) => [res.statusCode, res.json()];
  const badRequest = (message: string) => [400, { message: `400 Bad request - ${message}` }];
  const NO_PERMISSION = 'User does not have permission to create project access token';
  const auditOf = async (base: string) =>
    (await t.request({ url: `${base}/audit_events`, token: ownerToken })).json() as { details: Record<string, unknown> }[];
  const failedRevoke = (kind: string, id: number, message: string) =>
    `Attempted to revoke ${kind} access token with token_id: ${id}, but failed with message: ${message}`;
  const revoke = (id: number | string, token: string, base = `/api/v4/projects/${project.id}`) =>
    t.request({ method: 'DELETE', url: `${base}/access_tokens/${id}`, token });

  it('creates a bot user per token, a member at the token\'s level, and shows the token once', async () => {
    const res = await create({ name: 'ci bot', scopes: ['api'], access_level: 30, expires_at: '2099-01-01' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_level', 'active', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'revoked', 'scopes', 'token', 'user_id'].sort());
    assert.equal(body.access_level, 30);
    assert.deepEqual(body.scopes, ['api']);
    assert.equal(body.expires_at, '2099-01-01');
    const bot = await t.db.selectFrom('users').selectAll().where('id', '=', body.user_id).executeTakeFirstOrThrow();
    assert.equal(bot.user_type, 6);
    assert.equal(bot.username, `project_${project.id}_bot`);
    assert.equal(bot.email, `project_${project.id}_bot@noreply.127.0.0.1`);
    assert.equal(bot.name, 'ci bot');
    const member = await t.db.selectFrom('members').selectAll().where('user_id', '=', bot.id).execute();
    assert.deepEqual(member.map((m) => [m.source_type, m.source_id, m.access_level]), [['Project', project.id, 30]]);
    const stored = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.token_digest, body.token);

    const second = await create({ name: 'second', scopes: ['read_api'] });
    assert.equal(second.json().access_level, 40);
    const secondBot = await t.db.selectFrom('users').select('username').where('id', '=', second.json().user_id).executeTakeFirstOrThrow();
    assert.equal(secondBot.username, `project_${project.id}_bot1`);

    const list = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens`, token: tokens.maintainer });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((x: { id: number; access_level: number }) => [x.id, x.access_level]), [[body.id, 30], [second.json().id, 40]]);
    assert.equal(list.json()[0].token, undefined);
    const one = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/${body.id}`, token: tokens.maintainer });
    assert.equal(one.json().name, 'ci bot');
    const missing = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/999999`, token: tokens.maintainer });
    assert.deepEqual(missing.json(), { message: '404 Could not find project access token with token_id: 999999 Not Found' });
    // token_id is a String to the Service: text is looked up as ActiveRecord casts it, never refused with 400.
    const text = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/abc`, token: tokens.maintainer });
    assert.deepEqual(answer(text), [404, { message: '404 Could not find project access token with token_id: abc Not Found' }]);
    const cast = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/${body.id}abc`, token: tokens.maintainer });
    assert.equal(cast.json().id, body.id);
    assert.equal((await revoke('abc', tokens.developer)).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/abc`, token: tokens.developer })).statusCode, 401);
  });

  it('refuses in the Service\'s words: 401 on reads, the create service\'s message with 400 on create', async () => {
    const denied = await create({ name: 'x', scopes: ['api'] }, tokens.developer);
    assert.deepEqual(answer(denied), badRequest(NO_PERMISSION));
    const list = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens`, token: tokens.developer });
    assert.deepEqual([list.statusCode, list.json()], [401, { message: '401 Unauthorized' }]);
    const one = await t.request({ url: `/api/v4/projects/${project.id}/access_tokens/1`, token: tokens.developer });
    assert.deepEqual([one.statusCode, one.json()], [401, { message: '401 Unauthorized' }]);
    // A project the caller cannot see stays 404 before any of that.
    const stranger = await createToken(t.db, await createUser(t.db));
    assert.equal((await create({ name: 'x', scopes: ['api'] }, stranger)).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}/access_tokens`, token: stranger })).statusCode, 404);
    const owner50 = await create({ name: 'x', scopes: ['api'], access_level: 50 });
    assert.deepEqual([owner50.statusCode, owner50.json()], [400, { message: '400 Bad request - Could not provision owner access to project access token' }]);
    const sudo = await create({ name: 'x', scopes: ['sudo'] });
    assert.deepEqual([sudo.statusCode, sudo.json()], [400, { error: 'scopes does not have a valid value' }]);
    const level = await create({ name: 'x', scopes: ['api'], access_level: 35 });
    assert.deepEqual([level.statusCode, level.json()], [400, { error: 'access_level does not have a valid value' }]);
    const long = await create({ name: 'x'.repeat(256), scopes: ['api'] });
    assert.deepEqual([long.statusCode, long.json()], [400, { message: '400 Bad request - Name is too long (maximum is 255 characters)' }]);
    // The bot user is made (and its name checked) before the token (and its scopes).
    const blank = await create({ name: ' ', scopes: '' });
    assert.deepEqual([blank.statusCode, blank.json()], [400, { message: '400 Bad request - Name can\'t be blank' }]);
    const noScopes = await create({ name: 'x', scopes: '' });
    assert.deepEqual([noScopes.statusCode, noScopes.json()], [400, { message: '400 Bad request - Scopes can\'t be blank' }]);
    const missing = await create({ scopes: ['api'] });
    assert.deepEqual(missing.json(), { message: '400 Bad request - "name" not given' });
    const botToken = (await create({ name: 'maintainer bot', scopes: ['api'], access_level: 40 })).json().token;
    const byBot = await create({ name: 'bot of a bot', scopes: ['api'] }, botToken);
    assert.deepEqual(answer(byBot), badRequest(NO_PERMISSION));
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}/access_tokens`, token: botToken })).statusCode, 401);
    // The owner may hand out owner level.
    assert.equal((await create({ name: 'owner bot', scopes: ['api'], access_level: 50 }, ownerToken)).statusCode, 201);
    // Refused attempts are audited on the project, as the Service's EE create service does.
    const events = await auditOf(`/api/v4/projects/${project.id}`);
    const messages = events.map((e) => e.details.custom_message);
    const attempted = 'Attempted to create project access token but failed with message: ';
    assert.ok(messages.includes(`${attempted}${NO_PERMISSION}`));
    assert.ok(messages.includes(`${attempted}Could not provision owner access to project access token`));
    const made = events.find((e) => e.details.target_details === 'owner bot')!;
    assert.equal(made.details.target_type, 'PersonalAccessToken');
    const madeId = made.details.target_id;
    assert.equal(made.details.custom_message,
      `Created project access token with token_id: ${madeId} with scopes: ["api"] and Owner access level.`);
  });

  it('works on the API with PRIVATE-TOKEN and Bearer, only within its project and level', async () => {
    const { token, user_id: botId } = (await create({ name: 'reader', scopes: ['api'], access_level: 20 })).json();
    const byHeader = await t.request({ url: `/api/v4/projects/${project.id}`, headers: { 'private-token': token } });
    assert.equal(byHeader.statusCode, 200);
    const me = await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.json().id, botId);
    assert.equal(me.json().bot, true);
    // Another private project of the same owner is out of reach.
    assert.equal((await t.request({ url: `/api/v4/projects/${other.id}`, token })).statusCode, 404);
    // A reporter may not change the project.
    assert.equal((await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}`, token, payload: { description: 'x' } })).statusCode, 403);
  });

  it('clones with a read token, pushes only with a writing level and scope', async () => {
    const reader = (await create({ name: 'git reader', scopes: ['read_repository'], access_level: 20 })).json();
    const writer = (await create({ name: 'git writer', scopes: ['write_repository', 'read_repository'], access_level: 30 })).json();
    const dir = path.join(work, 'clone');
    const clone = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, { username: 'anything', password: reader.token }), dir], work);
    assert.equal(clone.code, 0, clone.stderr);
    await fs.writeFile(path.join(dir, 'bot.txt'), 'by a bot\n');
    await git(['add', 'bot.txt'], dir);
    assert.equal((await git(['commit', '-q', '-m', 'bot'], dir)).code, 0);
    const refused = await git(['push', '-q', 'origin', 'HEAD'], dir);
    assert.notEqual(refused.code, 0);
    await git(['remote', 'set-url', 'origin', cloneUrl(t.baseUrl, project.path_with_namespace, { username: 'bot', password: writer.token })], dir);
    // A branch of its own: the default branch is protected against Developers.
    const pushed = await git(['push', '-q', 'origin', 'HEAD:refs/heads/bot'], dir);
    assert.equal(pushed.code, 0, pushed.stderr);
    const elsewhere = await git(['clone', '-q', cloneUrl(t.baseUrl, `${project.path_with_namespace.split('/')[0]}/elsewhere`, { username: 'bot', password: writer.token }), path.join(work, 'other')], work);
    assert.notEqual(elsewhere.code, 0);
  });

  it('revokes the token and removes its bot', async () => {
    const { id, token, user_id: botId } = (await create({ name: 'short lived', scopes: ['api'] })).json();
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}`, token })).statusCode, 200);
    // The token is found first, then the revoke service refuses with its message (400).
    const denied = await revoke(id, tokens.developer);
    const developer = await t.db.selectFrom('users').innerJoin('personal_access_tokens', 'personal_access_tokens.user_id', 'users.id')
      .select('users.name').where('personal_access_tokens.token_digest', '=', digest(tokens.developer)).executeTakeFirstOrThrow();
    assert.deepEqual(answer(denied), badRequest(`${developer.name} cannot delete short lived`));
    const unknown = await revoke(999999, tokens.developer);
    assert.deepEqual(answer(unknown), [404, { message: '404 Could not find project access token with token_id: 999999 Not Found' }]);
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}`, token })).statusCode, 200);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${project.id}/access_tokens/${id}`, token: tokens.maintainer });
    assert.equal(del.statusCode, 204);
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}`, token })).statusCode, 401);
    assert.equal(await t.db.selectFrom('users').select('id').where('id', '=', botId).executeTakeFirst(), undefined);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${project.id}/access_tokens/${id}`, token: tokens.maintainer })).statusCode, 404);
    const events = await auditOf(`/api/v4/projects/${project.id}`);
    const revoked = events.filter((e) => e.details.target_id === id).map((e) => [e.details.custom_message, e.details.target_details]);
    assert.deepEqual(revoked.slice(0, 2), [
      [`Revoked project access token with token_id: ${id}`, 'short lived'],
      [failedRevoke('project', id, `${developer.name} cannot delete short lived`), 'short lived'],
    ]);
    const listed = (await t.request({ url: `/api/v4/projects/${project.id}/access_tokens`, token: tokens.maintainer })).json();
    assert.ok(!listed.some((x: { id: number }) => x.id === id));
  });

  it('removes a project\'s bots, and so its tokens, with the project', async () => {
    const doomed = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Doomed' } })).json();
    const res = await create({ name: 'doomed bot', scopes: ['api'] }, ownerToken, `/api/v4/projects/${doomed.id}`);
    assert.equal(res.statusCode, 201);
    assert.equal((await t.request({ url: '/api/v4/user', token: res.json().token })).statusCode, 200);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${doomed.id}`, token: ownerToken })).statusCode, 202);
    assert.equal((await t.request({ url: '/api/v4/user', token: res.json().token })).statusCode, 401);
    assert.equal(await t.db.selectFrom('users').select('id').where('id', '=', res.json().user_id).executeTakeFirst(), undefined);
  });

  it('group tokens: owners only, the bot a member of the group and so of its projects', async () => {
    const group = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Bot Group', path: 'bot-group' } })).json();
    const inGroup = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Grouped', namespace_id: group.id } })).json();
    const maintainer = await createUser(t.db);
    await t.request({ method: 'POST', url: `/api/v4/groups/${group.id}/members`, token: ownerToken, payload: { user_id: maintainer.id, access_level: 40 } });
    const base = `/api/v4/groups/${group.id}`;
    const maintainerToken = await createToken(t.db, maintainer);
    const denied = await create({ name: 'g', scopes: ['api'] }, maintainerToken, base);
    assert.deepEqual(answer(denied), badRequest('User does not have permission to create group access token'));
    assert.equal((await t.request({ url: `${base}/access_tokens`, token: maintainerToken })).statusCode, 401);
    const res = await create({ name: 'group bot', scopes: ['read_api'], access_level: 30 }, ownerToken, base);
    assert.equal(res.statusCode, 201, res.body);
    const bot = await t.db.selectFrom('users').selectAll().where('id', '=', res.json().user_id).executeTakeFirstOrThrow();
    assert.equal(bot.username, `group_${group.id}_bot`);
    assert.equal((await t.request({ url: `/api/v4/projects/${inGroup.id}`, token: res.json().token })).statusCode, 200);
    assert.equal((await t.request({ url: `/api/v4/projects/${project.id}`, token: res.json().token })).statusCode, 404);
    // read_api: reads only.
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${inGroup.id}/pipeline?ref=main`, token: res.json().token })).statusCode, 403);
    const list = await t.request({ url: `${base}/access_tokens`, token: ownerToken });
    assert.deepEqual(list.json().map((x: { name: string }) => x.name), ['group bot']);
    const notYours = await revoke(res.json().id, maintainerToken, base);
    assert.deepEqual(answer(notYours), badRequest(`${maintainer.name} cannot delete group bot`));
    assert.equal((await revoke(res.json().id, ownerToken, base)).statusCode, 204);
    const events = await auditOf(base);
    assert.deepEqual(events.map((e) => e.details.custom_message).slice(0, 4), [
      `Revoked group access token with token_id: ${res.json().id}`,
      failedRevoke('group', res.json().id, `${maintainer.name} cannot delete group bot`),
      `Created group token with token_id: ${res.json().id} with scopes: ["read_api"].`,
      'Attempted to create group access token but failed with message: User does not have permission to create group access token',
    ]);
  });
});
