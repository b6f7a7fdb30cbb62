/**
 * Credential events (issue 27, item 3; src/domain/auth/credential-events.ts): blocking a user,
 * revoking a token and removing a membership take effect on the very next request, whichever
 * interface made the change — REST, SCIM, the web pages, OAuth — and whichever reads next,
 * GraphQL included. Each case warms the caches first: the credential is asked for twice, so the
 * second answer came from the credential cache (5 s) and any remembered rows (2 s); the request
 * right after the change is refused only because the write announced itself.
 *
 * kiln's GraphQL has no mutation that changes users, tokens or memberships (echoCreate, jobs and
 * pipelines only): what it shows is that its requests, authenticated as REST's are, see the
 * changes other interfaces made at once.
 *
 * Then the port itself: an announcement waits for its transaction's commit and is dropped with a
 * rollback, belongs to one application's database handle, and an application that closed hears
 * nothing more.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/db/types.ts';
import { onCredentialEvent, type CredentialEvent } from '../../src/domain/auth/credential-events.ts';
import { revokePersonalAccessToken } from '../../src/domain/tokens/tokens.queries.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { changeUserState } from '../../src/domain/users/users.queries.ts';
import { ROOT_TOKEN, startPeerApp, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import {
  obtainCode, obtainTokens, postForm, REDIRECT_URI, registerClient, signedInBrowser, tokenRequest, type Browser, type TestClient,
} from '../helpers/oauth.ts';

type Send = () => Promise<LightMyRequestResponse>;

/** Asks twice, expecting `status` both times: the second answer comes from the caches. */
async function warm(send: Send, status = 200): Promise<void> {
  for (const attempt of ['first', 'cached']) {
    const res = await send();
    assert.equal(res.statusCode, status, `${attempt} request: ${res.body}`);
  }
}

describe('a change takes effect on the very next request, through every interface', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;

  const api = (token: string, url = '/api/v4/user') => () => t.request({ url, token });
  const bearer = (token: string, url = '/api/v4/user') => () => t.request({ url, headers: { authorization: `Bearer ${token}` } });
  const graphql = (query: string, headers: Record<string, string>) => () => t.request({ method: 'POST', url: '/api/graphql', headers, payload: { query } });
  const asRoot = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, token: ROOT_TOKEN, ...(payload ? { payload } : {}) });
  const tokenId = async (raw: string) =>
    (await t.db.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', digest(raw)).executeTakeFirstOrThrow()).id;

  /** A private project of the owner's, and a user who reads it as a developer. */
  async function privateProjectWithMember(name: string): Promise<{ projectId: number; member: UserRow; memberToken: string }> {
    const created = await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name, visibility: 'private' } });
    assert.equal(created.statusCode, 201, created.body);
    const member = await createUser(t.db);
    const added = await t.request({ method: 'POST', url: `/api/v4/projects/${created.json().id}/members`, token: ownerToken, payload: { user_id: member.id, access_level: 30 } });
    assert.equal(added.statusCode, 201, added.body);
    return { projectId: created.json().id as number, member, memberToken: await createToken(t.db, member) };
  }

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
  });
  after(async () => { await t.close(); });

  describe('REST', () => {
    it('blocks a user: POST /users/:id/block', async () => {
      const user = await createUser(t.db);
      const token = await createToken(t.db, user);
      await warm(api(token));
      assert.equal((await asRoot('POST', `/users/${user.id}/block`)).statusCode, 201);
      const res = await api(token)();
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
    });

    it('bans and deactivates a user', async () => {
      const banned = await createUser(t.db);
      const bannedToken = await createToken(t.db, banned);
      await warm(api(bannedToken));
      assert.equal((await asRoot('POST', `/users/${banned.id}/ban`)).statusCode, 201);
      assert.equal((await api(bannedToken)()).statusCode, 403);

      const dormant = await createUser(t.db);
      const dormantToken = await createToken(t.db, dormant);
      // Warmed through the cache alone: a request would record today's activity, and a user
      // active in the past 90 days cannot be deactivated.
      await t.db.updateTable('users').set({ last_activity_on: '2000-01-01' }).where('id', '=', dormant.id).execute();
      await warm(api(dormantToken));
      await t.db.updateTable('users').set({ last_activity_on: '2000-01-01' }).where('id', '=', dormant.id).execute();
      const deactivated = await asRoot('POST', `/users/${dormant.id}/deactivate`);
      assert.equal(deactivated.statusCode, 201, deactivated.body);
      const res = await api(dormantToken)();
      assert.equal(res.statusCode, 403);
      assert.match(res.json().message, /Your account has been deactivated/);
    });

    it('takes an administrator\'s rights away and expires a password: PUT /users/:id', async () => {
      const admin = await createUser(t.db, { admin: 1 });
      const adminToken = await createToken(t.db, admin);
      await warm(api(adminToken, '/api/v4/application/settings'));
      assert.equal((await asRoot('PUT', `/users/${admin.id}`, { admin: false })).statusCode, 200);
      assert.equal((await api(adminToken, '/api/v4/application/settings')()).statusCode, 403);

      const user = await createUser(t.db);
      const token = await createToken(t.db, user);
      await warm(api(token));
      // A password an administrator sets for someone else is already expired (spec, PUT /users/:id).
      assert.equal((await asRoot('PUT', `/users/${user.id}`, { password: 'a-new-password-for-you-1' })).statusCode, 200);
      const res = await api(token)();
      assert.equal(res.statusCode, 403);
      assert.match(res.json().message, /Your password expired/);
    });

    it('deletes a user: DELETE /users/:id', async () => {
      const user = await createUser(t.db);
      const token = await createToken(t.db, user);
      await warm(api(token));
      assert.equal((await asRoot('DELETE', `/users/${user.id}?hard_delete=true`)).statusCode, 204);
      assert.equal((await api(token)()).statusCode, 401);
    });

    it('revokes a personal access token: DELETE /personal_access_tokens/:id', async () => {
      const user = await createUser(t.db);
      const token = await createToken(t.db, user);
      await warm(api(token));
      const revoked = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${await tokenId(token)}`, token });
      assert.equal(revoked.statusCode, 204);
      const res = await api(token)();
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error_description, 'Token was revoked. You have to re-authorize from the user.');
    });

    it('revokes an impersonation token: DELETE /users/:id/impersonation_tokens/:id', async () => {
      const user = await createUser(t.db);
      const created = await asRoot('POST', `/users/${user.id}/impersonation_tokens`, { name: 'support', scopes: ['api'] });
      assert.equal(created.statusCode, 201, created.body);
      const { id, token } = created.json();
      await warm(api(token));
      assert.equal((await asRoot('DELETE', `/users/${user.id}/impersonation_tokens/${id}`)).statusCode, 204);
      assert.equal((await api(token)()).statusCode, 401);
    });

    it('revokes a project access token and removes its bot: DELETE /projects/:id/access_tokens/:id', async () => {
      const { projectId } = await privateProjectWithMember('bot-revoked');
      const created = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/access_tokens`, token: ownerToken, payload: { name: 'bot', scopes: ['api'] } });
      assert.equal(created.statusCode, 201, created.body);
      const botProject = api(created.json().token, `/api/v4/projects/${projectId}`);
      await warm(botProject);
      const revoked = await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}/access_tokens/${created.json().id}`, token: ownerToken });
      assert.equal(revoked.statusCode, 204);
      assert.equal((await botProject()).statusCode, 401);
    });

    it('removes the bots of a deleted project and of a deleted group', async () => {
      const { projectId } = await privateProjectWithMember('bot-of-deleted');
      const projectBot = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/access_tokens`, token: ownerToken, payload: { name: 'bot', scopes: ['api'] } });
      assert.equal(projectBot.statusCode, 201, projectBot.body);
      await warm(api(projectBot.json().token));
      assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}`, token: ownerToken })).statusCode, 202);
      assert.equal((await api(projectBot.json().token)()).statusCode, 401);

      const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Bots Go', path: `bots-go-${owner.id}` } });
      assert.equal(group.statusCode, 201, group.body);
      const groupBot = await t.request({ method: 'POST', url: `/api/v4/groups/${group.json().id}/access_tokens`, token: ownerToken, payload: { name: 'bot', scopes: ['api'] } });
      assert.equal(groupBot.statusCode, 201, groupBot.body);
      await warm(api(groupBot.json().token));
      assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/groups/${group.json().id}`, token: ownerToken })).statusCode, 202);
      assert.equal((await api(groupBot.json().token)()).statusCode, 401);
    });

    it('removes a membership: DELETE /projects/:id/members/:user_id', async () => {
      const { projectId, member, memberToken } = await privateProjectWithMember('member-removed');
      const read = api(memberToken, `/api/v4/projects/${projectId}`);
      await warm(read);
      assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}/members/${member.id}`, token: ownerToken })).statusCode, 204);
      assert.equal((await read()).statusCode, 404);
    });

    it('deletes an instance-wide OAuth application: DELETE /applications/:id', async () => {
      const client = await registerClient(t);
      const browser = await signedInBrowser(t, await createUser(t.db));
      const { access_token: accessToken } = await obtainTokens(t, browser, client);
      await warm(bearer(accessToken));
      assert.equal((await asRoot('DELETE', `/applications/${client.application.id}`)).statusCode, 204);
      assert.equal((await bearer(accessToken)()).statusCode, 401);
    });
  });

  describe('GraphQL', () => {
    const CURRENT_USER = '{ currentUser { username } }';

    it('refuses a user blocked and a token revoked elsewhere', async () => {
      const blocked = await createUser(t.db);
      const blockedToken = await createToken(t.db, blocked);
      await warm(graphql(CURRENT_USER, { 'private-token': blockedToken }));
      assert.equal((await asRoot('POST', `/users/${blocked.id}/block`)).statusCode, 201);
      const refused = await graphql(CURRENT_USER, { 'private-token': blockedToken })();
      assert.equal(refused.statusCode, 403);
      assert.deepEqual(refused.json(), { errors: [{ message: 'API not accessible for user' }] });

      const user = await createUser(t.db);
      const token = await createToken(t.db, user);
      await warm(graphql(CURRENT_USER, { 'private-token': token }));
      assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${await tokenId(token)}`, token })).statusCode, 204);
      const invalid = await graphql(CURRENT_USER, { 'private-token': token })();
      assert.equal(invalid.statusCode, 401);
      assert.deepEqual(invalid.json(), { errors: [{ message: 'Invalid token' }] });
    });

    it('hides a project from a member removed elsewhere', async () => {
      const { projectId, member, memberToken } = await privateProjectWithMember('graphql-member');
      const path = (await t.request({ url: `/api/v4/projects/${projectId}`, token: ownerToken })).json().path_with_namespace as string;
      const query = graphql(`{ project(fullPath: "${path}") { id } }`, { 'private-token': memberToken });
      await warm(query);
      assert.equal((await query()).json().data.project.id, `gid://gitlab/Project/${projectId}`);
      assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}/members/${member.id}`, token: ownerToken })).statusCode, 204);
      const res = await query();
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.project, null);
    });
  });

  describe('SCIM', () => {
    it('deprovisions a user: DELETE /api/scim/v2/groups/:group/Users/:id takes the group away at once', async () => {
      const groupPath = `scim-${owner.id}`;
      const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Scim', path: groupPath, visibility: 'private' } });
      assert.equal(group.statusCode, 201, group.body);
      const groupId = group.json().id as number;
      const scimToken = await t.request({ method: 'POST', url: `/api/v4/groups/${groupId}/scim_token`, token: ownerToken });
      assert.equal(scimToken.statusCode, 201, scimToken.body);
      const scim = (method: 'POST' | 'DELETE', path: string, payload?: object) => t.app.inject({
        method, url: `/api/scim/v2/groups/${groupPath}${path}`,
        headers: { authorization: `Bearer ${scimToken.json().token}`, ...(payload ? { 'content-type': 'application/scim+json' } : {}) },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
      const provisioned = await scim('POST', '/Users', {
        externalId: 'leaver-uid', userName: 'leaver', emails: [{ type: 'work', value: 'leaver@corp.example' }], name: { formatted: 'Leaver' },
      });
      assert.equal(provisioned.statusCode, 201, provisioned.body);
      const leaver = await t.db.selectFrom('users').selectAll().where('email', '=', 'leaver@corp.example').executeTakeFirstOrThrow();
      const token = await createToken(t.db, leaver);
      const readGroup = api(token, `/api/v4/groups/${groupId}`);
      await warm(readGroup);
      await warm(api(token));

      assert.equal((await scim('DELETE', '/Users/leaver-uid')).statusCode, 204);
      assert.equal((await readGroup()).statusCode, 404);
      // The account itself stays (deprovisioning is not blocking).
      assert.equal((await api(token)()).statusCode, 200);
    });
  });

  describe('web pages', () => {
    it('signs out: POST /users/sign_out ends the session on the API and GraphQL', async () => {
      const browser = await signedInBrowser(t, await createUser(t.db));
      const cookie = { cookie: browser.cookie };
      const read = () => t.request({ url: '/api/v4/user', headers: cookie });
      await warm(read);
      await warm(graphql('{ currentUser { username } }', cookie));
      const out = await postForm(t, '/users/sign_out', { authenticity_token: browser.csrf }, cookie);
      assert.equal(out.statusCode, 303);
      assert.equal((await read()).statusCode, 401);
      const viaGraphql = await graphql('{ currentUser { username } }', cookie)();
      assert.equal(viaGraphql.statusCode, 200);
      assert.deepEqual(viaGraphql.json(), { data: { currentUser: null } });
    });

    it('deletes an application: POST /profile/applications/:id/delete revokes its OAuth tokens', async () => {
      const user = await createUser(t.db);
      const browser = await signedInBrowser(t, user);
      const client = await registerClient(t, { ownerId: user.id });
      const { access_token: accessToken } = await obtainTokens(t, browser, client);
      await warm(bearer(accessToken));
      const deleted = await postForm(t, `/profile/applications/${client.application.id}/delete`, { authenticity_token: browser.csrf }, { cookie: browser.cookie });
      assert.equal(deleted.statusCode, 303);
      assert.equal((await bearer(accessToken)()).statusCode, 401);
    });
  });

  describe('OAuth', () => {
    let browser: Browser;
    let client: TestClient;
    const clientAuth = () => ({ client_id: client.clientId, client_secret: client.secret });

    before(async () => {
      browser = await signedInBrowser(t, await createUser(t.db));
      client = await registerClient(t);
    });

    it('revokes a token: POST /oauth/revoke', async () => {
      const { access_token: accessToken } = await obtainTokens(t, browser, client);
      await warm(bearer(accessToken));
      await warm(graphql('{ currentUser { username } }', { authorization: `Bearer ${accessToken}` }));
      const revoked = await postForm(t, '/oauth/revoke', { token: accessToken, ...clientAuth() });
      assert.equal(revoked.statusCode, 200);
      assert.equal((await bearer(accessToken)()).statusCode, 401);
      assert.equal((await graphql('{ currentUser { username } }', { authorization: `Bearer ${accessToken}` })()).statusCode, 401);
    });

    it('revokes by refresh token: the access token of its row stops too', async () => {
      const tokens = await obtainTokens(t, browser, client);
      await warm(bearer(tokens.access_token));
      const revoked = await postForm(t, '/oauth/revoke', { token: tokens.refresh_token, token_type_hint: 'refresh_token', ...clientAuth() });
      assert.equal(revoked.statusCode, 200);
      assert.equal((await bearer(tokens.access_token)()).statusCode, 401);
    });

    it('rotates a refresh token, and revokes the generations after one presented again', async () => {
      const first = await obtainTokens(t, browser, client);
      await warm(bearer(first.access_token));
      const second = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientAuth() });
      assert.equal(second.statusCode, 200, second.body);
      assert.equal((await bearer(first.access_token)()).statusCode, 401);

      await warm(bearer(second.json().access_token));
      const reuse = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientAuth() });
      assert.equal(reuse.json().error, 'invalid_grant');
      assert.equal((await bearer(second.json().access_token)()).statusCode, 401);
    });

    it('revokes the tokens of an authorization code presented again', async () => {
      const code = await obtainCode(t, browser, client);
      const exchange = () => tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...clientAuth() });
      const issued = await exchange();
      assert.equal(issued.statusCode, 200, issued.body);
      await warm(bearer(issued.json().access_token));
      assert.equal((await exchange()).json().error, 'invalid_grant');
      assert.equal((await bearer(issued.json().access_token)()).statusCode, 401);
    });
  });
});

describe('credential events: the port', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  /** Listens to `t`'s handle for the length of `run`. */
  async function heard(run: () => Promise<void>, db = t.db): Promise<CredentialEvent[]> {
    const events: CredentialEvent[] = [];
    const stop = onCredentialEvent(db, (e) => events.push(e));
    try {
      await run();
    } finally {
      stop();
    }
    return events;
  }

  it('announces a write outside a transaction at once', async () => {
    const user = await createUser(t.db);
    const events = await heard(async () => {
      assert.equal(await changeUserState(t.db, user.id, 'active', 'blocked'), true);
    });
    assert.deepEqual(events, [{ type: 'user', userId: user.id, change: 'state' }]);
  });

  it('announces a write in a transaction only once it commits', async () => {
    const user = await createUser(t.db);
    const raw = await createToken(t.db, user);
    const id = (await t.db.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', digest(raw)).executeTakeFirstOrThrow()).id;
    const events: CredentialEvent[] = [];
    const stop = onCredentialEvent(t.db, (e) => events.push(e));
    try {
      await t.db.transaction().execute(async (trx) => {
        await revokePersonalAccessToken(trx, id);
        await changeUserState(trx, user.id, 'active', 'blocked');
        assert.deepEqual(events, [], 'nothing is heard before the commit');
      });
    } finally {
      stop();
    }
    assert.deepEqual(events, [
      { type: 'token', kind: 'personal_access_token', id, change: 'revoked' },
      { type: 'user', userId: user.id, change: 'state' },
    ]);
  });

  it('drops the announcements of a transaction that rolls back, and the cached credential keeps working', async () => {
    const user = await createUser(t.db);
    const raw = await createToken(t.db, user);
    const id = (await t.db.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', digest(raw)).executeTakeFirstOrThrow()).id;
    await warm(() => t.request({ url: '/api/v4/user', token: raw }));
    const events = await heard(async () => {
      await assert.rejects(t.db.transaction().execute(async (trx) => {
        await revokePersonalAccessToken(trx, id);
        throw new Error('rolled back');
      }), /rolled back/);
    });
    assert.deepEqual(events, []);
    assert.ok(t.app.kiln.authCache.get(`t:${digest(raw)}`), 'the cached credential was not dropped');
    assert.equal((await t.request({ url: '/api/v4/user', token: raw })).statusCode, 200);
  });

  it('belongs to one application: another one in the process hears nothing, and stops listening when it closes', async () => {
    const peer = await startPeerApp(t);
    try {
      const user = await createUser(t.db);
      const raw = await createToken(t.db, user);
      const key = `t:${digest(raw)}`;
      await warm(() => peer.request({ url: '/api/v4/user', token: raw }));
      const onPeer = await heard(async () => {
        await changeUserState(t.db, user.id, 'active', 'banned');
      }, peer.db);
      assert.deepEqual(onPeer, [], "the first application's write is not announced on the peer's handle");
      assert.ok(peer.app.kiln.authCache.get(key), 'without a cluster, the peer keeps its entry until it expires');

      // Written through the peer's handle: its own cache hears it, while it is open.
      await changeUserState(peer.db, user.id, 'banned', 'active');
      assert.equal(peer.app.kiln.authCache.get(key), undefined);
      await warm(() => peer.request({ url: '/api/v4/user', token: raw }));
      await peer.app.close();
      await changeUserState(peer.db, user.id, 'active', 'blocked');
      assert.ok(peer.app.kiln.authCache.get(key), 'a closed application no longer listens');
    } finally {
      await peer.close();
    }
  });
});
