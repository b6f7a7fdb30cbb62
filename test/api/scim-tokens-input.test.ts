/**
 * The SCIM API's edges: the group's SCIM token (POST /groups/:id/scim_token) and what it opens,
 * pagination, bad input answered 4xx in SCIM's error shape (RFC 7644 §3.12), and a group's
 * deletion. The identity providers' sequences: scim.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { assertScimError, startScimFixture, type ScimFixture } from '../helpers/scim.ts';

describe('SCIM tokens and input', () => {
  let f: ScimFixture;
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let groupId: number;
  let groupPath: string;
  let otherGroupPath: string;
  let otherScimToken: string;
  const scim: ScimFixture['scim'] = (...args) => f.scim(...args);

  before(async () => {
    f = await startScimFixture();
    ({ t, owner, ownerToken, groupId, groupPath, otherGroupPath, otherScimToken } = f);
  });
  after(async () => { await t.close(); });

  it('creates the token for owners only, stores a digest, and replaces it when asked again', async () => {
    assert.match(f.scimToken, /^[A-Za-z0-9_-]{40}$/);
    const stored = await t.db.selectFrom('scim_tokens').selectAll().where('group_id', '=', groupId).executeTakeFirstOrThrow();
    assert.notEqual(stored.token_digest, f.scimToken);
    assert.ok(!stored.token_digest.includes(f.scimToken));

    const dev = await createUser(t.db);
    const devToken = await createToken(t.db, dev);
    await t.request({ method: 'POST', url: `/api/v4/groups/${groupId}/members`, token: ownerToken, payload: { user_id: dev.id, access_level: 40 } });
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${groupId}/scim_token`, token: devToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${groupId}/scim_token` })).statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/groups/999999/scim_token', token: ownerToken })).statusCode, 404);
    const sub = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Sub', path: 'sub', parent_id: groupId } })).json();
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${sub.id}/scim_token`, token: ownerToken })).statusCode, 400);

    // Owners asking at once each get a token; the last one written is the group's.
    const fresh = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Race', path: `race-${owner.id}` } })).json();
    const raced = await Promise.all(Array.from({ length: 4 }, () => t.request({ method: 'POST', url: `/api/v4/groups/${fresh.id}/scim_token`, token: ownerToken })));
    assert.deepEqual(raced.map((r) => r.statusCode), [201, 201, 201, 201]);
    const working = await Promise.all(raced.map((r) => scim('GET', '/Users', { token: r.json().token, group: fresh.path })));
    assert.equal(working.filter((r) => r.statusCode === 200).length, 1);

    // A new token replaces the old one, which no longer works.
    const replaced = (await t.request({ method: 'POST', url: `/api/v4/groups/${groupId}/scim_token`, token: ROOT_TOKEN })).json().token;
    assert.notEqual(replaced, f.scimToken);
    assertScimError(await scim('GET', '/Users'), 401);
    f.scimToken = replaced;
    assert.equal((await scim('GET', '/Users')).statusCode, 200);
  });

  it('refuses a token on another group, a missing token, and user tokens; the SCIM token is no REST credential', async () => {
    assertScimError(await scim('GET', '/Users', { token: otherScimToken }), 401);
    assertScimError(await scim('GET', '/Users', { group: otherGroupPath }), 401);
    assertScimError(await scim('GET', '/Users', { token: null }), 401);
    assertScimError(await scim('GET', '/Users', { token: ownerToken }), 401);
    assertScimError(await scim('GET', '/Users', { token: ROOT_TOKEN }), 401);
    // An unknown group answers exactly as a wrong token does.
    const missing = await scim('GET', '/Users', { group: 'no-such-group' });
    assertScimError(missing, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="SCIM"');
    assert.equal((await scim('GET', '/Users', { token: otherScimToken, group: otherGroupPath })).statusCode, 200);
    // By id as well as by path.
    assert.equal((await scim('GET', '/Users', { group: String(groupId) })).statusCode, 200);

    for (const headers of [{ authorization: `Bearer ${f.scimToken}` }, { 'private-token': f.scimToken }]) {
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v4/user', headers })).statusCode, 401);
    }
  });

  it('pages with startIndex and count', async () => {
    for (let i = 0; i < 4; i += 1) {
      const res = await scim('POST', '/Users', { payload: { externalId: `page-${i}`, userName: `page${i}`, emails: [{ type: 'work', value: `page${i}@x.example` }], name: { formatted: `Page ${i}` } } });
      assert.equal(res.statusCode, 201, res.body);
    }
    const all = (await scim('GET', '/Users')).json();
    assert.ok(all.totalResults >= 4);
    const page = (await scim('GET', '/Users?startIndex=2&count=2')).json();
    assert.equal(page.startIndex, 2);
    assert.equal(page.itemsPerPage, 2);
    assert.equal(page.totalResults, all.totalResults);
    assert.deepEqual(page.Resources.map((r: { id: string }) => r.id), all.Resources.slice(1, 3).map((r: { id: string }) => r.id));
    const zero = (await scim('GET', '/Users?startIndex=-5&count=0')).json();
    assert.equal(zero.startIndex, 1);
    assert.equal(zero.Resources.length, 0);
    assert.equal((await scim('GET', '/Users?startIndex=99999999999')).json().Resources.length, 0);
    assertScimError(await scim('GET', '/Users?count=ten'), 400, 'invalidValue');
  });

  it('answers bad input 4xx in the SCIM error shape', async () => {
    for (const f of ['userName sw "j"', 'name.formatted eq "x"', 'userName eq "a" and id eq "b"', 'userName eq', 'userName eq true', 'emails[type eq "work"].value eq "a@b"', `userName eq "${'x'.repeat(300)}"`]) {
      assertScimError(await scim('GET', `/Users?filter=${encodeURIComponent(f)}`), 400, 'invalidFilter');
    }
    assertScimError(await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "a\u0000b"')}`), 400, 'invalidFilter');
    assertScimError(await scim('GET', '/Users?filter=a&filter=b'), 400, 'invalidFilter');

    const valid = { externalId: 'bad-input', userName: 'bad', emails: [{ type: 'work', value: 'bad@x.example' }], name: { formatted: 'Bad Input' } };
    assertScimError(await scim('POST', '/Users', { payload: '{"externalId": ' }), 400, 'invalidSyntax');
    assertScimError(await scim('POST', '/Users', { payload: '{"externalId": "x"', contentType: 'application/json' }), 400, 'invalidSyntax');
    assertScimError(await scim('POST', '/Users', { payload: '[1,2]' }), 400, 'invalidSyntax');
    assertScimError(await scim('POST', '/Users', { payload: '{"__proto__": {"admin": true}}' }), 400, 'invalidSyntax');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, externalId: 'a\u0000b' } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, name: { formatted: 'x\u0000' } } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, userName: 'u'.repeat(1_000_000) } }), 413);
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, userName: 'u'.repeat(5000) } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, externalId: undefined } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, emails: [] } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, emails: [{ type: 'work', value: 'not-an-email' }] } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, name: undefined } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: { ...valid, active: 'maybe' } }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { payload: 'userName=x', contentType: 'text/plain' }), 415);

    await scim('POST', '/Users', { payload: valid });
    const patch = (payload: unknown) => scim('PATCH', '/Users/bad-input', { payload });
    assertScimError(await patch({ Operations: [] }), 400, 'invalidSyntax');
    assertScimError(await patch({ Operations: [{ op: 'explode', path: 'active', value: false }] }), 400, 'invalidSyntax');
    assertScimError(await patch({ Operations: [{ op: 'replace', path: 'active', value: 'nope' }] }), 400, 'invalidValue');
    assertScimError(await patch({ Operations: [{ op: 'replace', value: 'not an object' }] }), 400, 'invalidValue');
    assertScimError(await patch({ Operations: [{ op: 'replace', path: 'userName', value: 'bad name!' }] }), 400, 'invalidValue');
    assertScimError(await patch({ Operations: [{ op: 'replace', path: 'displayName', value: 'n'.repeat(256) }] }), 400, 'invalidValue');
    assertScimError(await patch({ Operations: [{ op: 'replace', path: 'externalId', value: '\u0000' }] }), 400, 'invalidValue');
    assertScimError(await scim('PATCH', '/Users/%00', { payload: { Operations: [{ op: 'replace', path: 'active', value: false }] } }), 404);
    assertScimError(await scim('GET', `/Users/${'x'.repeat(900)}`), 404);
    assertScimError(await scim('GET', '/Users', { group: `${'g'.repeat(300)}\u0000` }), 401);

    // The base path with a trailing slash, and extern_uids holding a slash.
    assert.equal((await scim('GET', '/Users/')).statusCode, 200);
    const slashed = await scim('POST', '/Users/', { payload: { ...valid, externalId: 'tenant/42', userName: 'slashed', emails: [{ type: 'work', value: 'slashed@x.example' }] } });
    assert.equal(slashed.statusCode, 201, slashed.body);
    assert.equal(slashed.json().meta.location, `http://kiln.test/api/scim/v2/groups/${groupPath}/Users/tenant%2F42`);
    assert.equal((await scim('GET', '/Users/tenant%2F42')).json().id, 'tenant/42');

    // Unknown routes and methods of the SCIM API answer in its shape too.
    assertScimError(await scim('GET', '/Groups'), 404);
    const put = await scim('PUT', '/Users/bad-input', { payload: valid });
    assertScimError(put, 405);
    assert.equal(put.headers.allow, 'GET, PATCH, DELETE');
  });

  it('a deleted group takes its token, SCIM identities and group_saml identities with it', async () => {
    const g = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Gone', path: `gone-${owner.id}` } })).json();
    const token = (await t.request({ method: 'POST', url: `/api/v4/groups/${g.id}/scim_token`, token: ownerToken })).json().token;
    const created = await scim('POST', '/Users', { token, group: g.path, payload: { externalId: 'gone-uid', userName: 'gone', emails: [{ type: 'work', value: 'gone@corp.example' }], name: { formatted: 'Gone User' } } });
    assert.equal(created.statusCode, 201, created.body);
    const user = await t.db.selectFrom('users').select('id').where('email', '=', 'gone@corp.example').executeTakeFirstOrThrow();
    assert.equal((await t.db.selectFrom('identities').select('id').where('user_id', '=', user.id).execute()).length, 1);
    await t.db.deleteFrom('namespaces').where('id', '=', g.id).execute();
    assert.deepEqual(await t.db.selectFrom('identities').select('id').where('user_id', '=', user.id).execute(), []);
    assert.deepEqual(await t.db.selectFrom('scim_identities').select('id').where('group_id', '=', g.id).execute(), []);
    assert.deepEqual(await t.db.selectFrom('scim_tokens').select('id').where('group_id', '=', g.id).execute(), []);
    assertScimError(await scim('GET', '/Users', { token, group: g.path }), 401);
  });
});
