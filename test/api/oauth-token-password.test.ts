import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { hashPassword } from '../../src/domain/users/password.ts';
import { basicAuth, registerClient, tokenRequest, type TestClient } from '../helpers/oauth.ts';
import type { UserRow } from '../../src/db/types.ts';

const PASSWORD = 'correct horse battery';

describe('POST /oauth/token, grant_type=password', () => {
  let t: TestApp;
  let user: UserRow;
  let client: TestClient;
  let passwordHash: string;
  const grant = (fields: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
    tokenRequest(t, { grant_type: 'password', username: user.username, password: PASSWORD, ...fields }, headers);

  before(async () => {
    t = await startTestApp();
    passwordHash = await hashPassword(PASSWORD);
    user = await createUser(t.db, { encrypted_password: passwordHash });
    client = await registerClient(t, { scopes: ['api', 'read_user', 'openid'] });
  });
  after(async () => { await t.close(); });

  it('issues a token without client credentials, default scope api, and no refresh token', async () => {
    const res = await grant({});
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['access_token', 'token_type', 'expires_in', 'scope', 'created_at']);
    assert.equal(body.scope, 'api');
    assert.equal(body.expires_in, 7200);
    const row = await t.db.selectFrom('oauth_access_tokens').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(row.application_id, null);
    assert.equal(row.refresh_token_digest, null);
    const me = await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(me.json().username, user.username);
  });

  it('signs in by email too, case-insensitively', async () => {
    assert.equal((await grant({ username: user.email.toUpperCase() })).statusCode, 200);
  });

  it('accepts HTTP Basic client credentials and keeps scopes within the application', async () => {
    const res = await grant({ scope: 'read_user openid' }, { authorization: basicAuth(client.clientId, client.secret) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().scope, 'read_user openid');
    assert.equal(typeof res.json().id_token, 'string');
    assert.equal(res.json().refresh_token, undefined);
    const outside = await grant({ scope: 'write_repository' }, { authorization: basicAuth(client.clientId, client.secret) });
    assert.equal(outside.statusCode, 400);
    assert.equal(outside.json().error, 'invalid_scope');
  });

  it('refuses wrong client credentials with 401 invalid_client', async () => {
    const res = await grant({}, { authorization: basicAuth(client.clientId, 'wrong') });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    const body = await grant({ client_id: client.clientId, client_secret: 'wrong' });
    assert.equal(body.statusCode, 401);
  });

  it('refuses unknown scopes without a client', async () => {
    const res = await grant({ scope: 'api everything' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_scope');
  });

  it('refuses bad credentials with invalid_grant', async () => {
    for (const fields of [{ password: 'wrong' }, { username: 'nobody-here' }, { password: undefined }, { username: undefined }]) {
      const res = await grant(fields);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), {
        error: 'invalid_grant',
        error_description: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
      });
    }
    await t.db.updateTable('users').set({ failed_attempts: 0, locked_at: null }).where('id', '=', user.id).execute();
  });

  it('refuses users with two-factor authentication even with the right password', async () => {
    const twoFactor = await createUser(t.db, { encrypted_password: passwordHash, otp_required_for_login: 1 });
    const res = await grant({ username: twoFactor.username });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  it('refuses blocked users', async () => {
    const blocked = await createUser(t.db, { encrypted_password: passwordHash, state: 'blocked' });
    assert.equal((await grant({ username: blocked.username })).json().error, 'invalid_grant');
  });

  it('counts failures towards the lockout: locked after 10, even the right password, unlocked 10 minutes later', async () => {
    const victim = await createUser(t.db, { encrypted_password: passwordHash });
    for (let i = 0; i < 10; i++) assert.equal((await grant({ username: victim.username, password: `wrong${i}` })).statusCode, 400);
    const row = await t.db.selectFrom('users').select(['failed_attempts', 'locked_at']).where('id', '=', victim.id).executeTakeFirstOrThrow();
    assert.equal(row.failed_attempts, 10);
    assert.notEqual(row.locked_at, null);
    assert.equal((await grant({ username: victim.username })).statusCode, 400);
    await t.db.updateTable('users').set({ locked_at: new Date(Date.now() - 601_000).toISOString() }).where('id', '=', victim.id).execute();
    assert.equal((await grant({ username: victim.username })).statusCode, 200);
    const after = await t.db.selectFrom('users').select(['failed_attempts', 'locked_at']).where('id', '=', victim.id).executeTakeFirstOrThrow();
    assert.deepEqual(after, { failed_attempts: 0, locked_at: null });
  });
});
