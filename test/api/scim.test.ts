/**
 * SCIM 2.0 provisioning of a group's members (/api/scim/v2/groups/:group_path/Users): the
 * sequences Okta and Entra ID run (create, list by filter, patch name, deactivate, reactivate,
 * delete; PATCH with and without `path`, booleans as "False"), linking existing accounts, and
 * what deprovisioning takes away. Tokens and bad input: scim-tokens-input.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { assertScimError, PATCH_URN, SCIM_JSON, startScimFixture, type ScimFixture } from '../helpers/scim.ts';

describe('SCIM provisioning', () => {
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

  it('runs the Okta sequence: create, list by filter, patch name, deactivate, reactivate, delete', async () => {
    // Okta's first call: is the user there already?
    const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "jane.okta@example.com"')}&startIndex=1&count=100`);
    assert.equal(none.statusCode, 200);
    assert.equal(none.headers['content-type'], SCIM_JSON);
    assert.deepEqual(none.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, itemsPerPage: 0, startIndex: 1, Resources: [] });

    const created = await scim('POST', '/Users', { payload: {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'jane.okta@example.com',
      name: { givenName: 'Jane', familyName: 'Okta' },
      emails: [{ primary: true, value: 'jane.okta@example.com', type: 'work' }],
      displayName: 'Jane Okta',
      externalId: '00u1okta',
      active: true,
      password: 'ignored-by-kiln',
    } });
    assert.equal(created.statusCode, 201, created.body);
    const user = created.json();
    assert.equal(user.id, '00u1okta');
    assert.equal(user.externalId, '00u1okta');
    assert.equal(user.userName, 'jane.okta');
    assert.equal(user.active, true);
    assert.deepEqual(user.name, { formatted: 'Jane Okta', givenName: 'Jane', familyName: 'Okta' });
    assert.deepEqual(user.emails, [{ type: 'work', value: 'jane.okta@example.com', primary: true }]);
    assert.deepEqual(user.schemas, ['urn:ietf:params:scim:schemas:core:2.0:User']);
    assert.equal(user.meta.resourceType, 'User');
    assert.equal(user.meta.location, `http://kiln.test/api/scim/v2/groups/${groupPath}/Users/00u1okta`);
    assert.equal(created.headers.location, user.meta.location);

    // The account: a group member with the default role (Guest), a group_saml identity.
    const account = await t.db.selectFrom('users').selectAll().where('username', '=', 'jane.okta').executeTakeFirstOrThrow();
    assert.equal(account.password_automatically_set, 1);
    const member = await t.db.selectFrom('members').selectAll().where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', account.id).executeTakeFirstOrThrow();
    assert.equal(member.access_level, 10);
    const provider = await t.db.selectFrom('saml_providers').selectAll().where('group_id', '=', groupId).executeTakeFirstOrThrow();
    const shown = (await t.request({ url: `/api/v4/users/${account.id}`, token: ROOT_TOKEN })).json();
    assert.deepEqual(shown.identities, [{ provider: 'group_saml', extern_uid: '00u1okta', saml_provider_id: provider.id }]);
    const listed = (await t.request({ url: `/api/v4/users?extern_uid=00u1okta&provider=group_saml`, token: ROOT_TOKEN })).json();
    assert.deepEqual(listed.map((u: { id: number }) => u.id), [account.id]);
    assert.deepEqual(listed[0].identities, [{ provider: 'group_saml', extern_uid: '00u1okta', saml_provider_id: provider.id }]);

    // Filters: userName (any case of the attribute and operator), id, externalId.
    for (const f of ['userName eq "jane.okta@example.com"', 'USERNAME EQ "jane.okta"', 'externalId eq "00U1OKTA"', 'id eq "00u1okta"', 'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "jane.okta"']) {
      const res = (await scim('GET', `/Users?filter=${encodeURIComponent(f)}`)).json();
      assert.equal(res.totalResults, 1, f);
      assert.equal(res.Resources[0].id, '00u1okta', f);
    }
    assert.equal((await scim('GET', '/Users/00u1okta')).json().userName, 'jane.okta');

    // Okta updates with PATCH and no path.
    const renamed = await scim('PATCH', '/Users/00u1okta', { payload: { schemas: [PATCH_URN], Operations: [{ op: 'replace', value: { name: { givenName: 'Janet', familyName: 'Okta' } } }] } });
    assert.equal(renamed.statusCode, 204, renamed.body);
    assert.equal((await scim('GET', '/Users/00u1okta')).json().name.formatted, 'Janet Okta');

    const deactivated = await scim('PATCH', '/Users/00u1okta', { payload: { schemas: [PATCH_URN], Operations: [{ op: 'replace', value: { active: false } }] } });
    assert.equal(deactivated.statusCode, 204, deactivated.body);
    assert.equal((await scim('GET', '/Users/00u1okta')).json().active, false);
    assert.equal(await t.db.selectFrom('members').select('id').where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', account.id).executeTakeFirst(), undefined);
    // Deprovisioning keeps the account.
    assert.equal((await t.request({ url: `/api/v4/users/${account.id}`, token: ROOT_TOKEN })).statusCode, 200);

    const reactivated = await scim('PATCH', '/Users/00u1okta', { payload: { schemas: [PATCH_URN], Operations: [{ op: 'replace', value: { active: true } }] } });
    assert.equal(reactivated.statusCode, 204);
    assert.equal((await scim('GET', '/Users/00u1okta')).json().active, true);
    assert.equal((await t.db.selectFrom('members').select('access_level').where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', account.id).executeTakeFirstOrThrow()).access_level, 10);

    assert.equal((await scim('DELETE', '/Users/00u1okta')).statusCode, 204);
    assert.equal((await scim('GET', '/Users/00u1okta')).json().active, false);
    assert.equal(await t.db.selectFrom('members').select('id').where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', account.id).executeTakeFirst(), undefined);
    assert.equal((await scim('DELETE', '/Users/00u1okta')).statusCode, 204);
    assertScimError(await scim('DELETE', '/Users/nobody'), 404);
  });

  it('runs the Entra ID sequence: PATCH with path, booleans as "False"/"True"', async () => {
    const probe = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "3f2a7a5e-guid-of-test-connection"')}`);
    assert.equal(probe.json().totalResults, 0);

    const created = await scim('POST', '/Users', { contentType: 'application/scim+json; charset=utf-8', payload: {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: 'a1b2c3d4-entra',
      userName: 'alex.w@contoso.example',
      active: true,
      displayName: 'Alex Wilber',
      emails: [{ primary: true, type: 'work', value: 'alex.w@contoso.example' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Alex Wilber', familyName: 'Wilber', givenName: 'Alex' },
      roles: [],
    } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().userName, 'alex.w');

    const byExternal = (await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "a1b2c3d4-entra"')}`)).json();
    assert.equal(byExternal.Resources[0].emails[0].value, 'alex.w@contoso.example');

    const patch = (ops: unknown[]) => scim('PATCH', '/Users/a1b2c3d4-entra', { payload: { schemas: [PATCH_URN], Operations: ops } });
    assert.equal((await patch([
      { op: 'Replace', path: 'displayName', value: 'Alex Wilber-Smith' },
      { op: 'Replace', path: 'name.givenName', value: 'Alex' },
      { op: 'Add', path: 'title', value: 'Engineer' },
    ])).statusCode, 204);
    assert.equal((await scim('GET', '/Users/a1b2c3d4-entra')).json().name.formatted, 'Alex Wilber-Smith');
    assert.equal((await patch([{ op: 'Replace', path: 'name.familyName', value: 'Wilber' }])).statusCode, 204);
    assert.equal((await scim('GET', '/Users/a1b2c3d4-entra')).json().name.formatted, 'Alex Wilber');
    assert.equal((await patch([{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'alex.wilber@contoso.example' }])).statusCode, 204);
    assert.equal((await patch([{ op: 'Replace', path: 'userName', value: 'alex.wilber' }])).statusCode, 204);
    const after1 = (await scim('GET', '/Users/a1b2c3d4-entra')).json();
    assert.equal(after1.userName, 'alex.wilber');
    assert.equal(after1.emails[0].value, 'alex.wilber@contoso.example');
    // The personal namespace follows the username.
    assert.ok(await t.db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('path', '=', 'alex.wilber').executeTakeFirst());

    assert.equal((await patch([{ op: 'Replace', path: 'active', value: 'False' }])).statusCode, 204);
    assert.equal((await scim('GET', '/Users/a1b2c3d4-entra')).json().active, false);
    assert.equal((await patch([{ op: 'Replace', path: 'active', value: 'True' }])).statusCode, 204);
    assert.equal((await scim('GET', '/Users/a1b2c3d4-entra')).json().active, true);

    // A new externalId moves the SCIM and group_saml identities.
    assert.equal((await patch([{ op: 'Replace', path: 'externalId', value: 'a1b2c3d4-moved' }])).statusCode, 204);
    assertScimError(await scim('GET', '/Users/a1b2c3d4-entra'), 404);
    const moved = (await scim('GET', '/Users/a1b2c3d4-moved')).json();
    assert.equal(moved.userName, 'alex.wilber');
    const account = await t.db.selectFrom('users').select('id').where('username', '=', 'alex.wilber').executeTakeFirstOrThrow();
    assert.equal((await t.db.selectFrom('identities').select('extern_uid').where('user_id', '=', account.id).executeTakeFirstOrThrow()).extern_uid, 'a1b2c3d4-moved');

    assert.equal((await scim('DELETE', '/Users/a1b2c3d4-moved')).statusCode, 204);
    assert.equal((await scim('GET', '/Users/a1b2c3d4-moved')).json().active, false);
    // Provisioning the same user again reactivates the identity.
    const again = await scim('POST', '/Users', { payload: { externalId: 'a1b2c3d4-moved', userName: 'alex.wilber', emails: [{ type: 'work', value: 'alex.wilber@contoso.example' }], name: { formatted: 'Alex Wilber' } } });
    assert.equal(again.statusCode, 201);
    assert.equal(again.json().active, true);
  });

  it('links an existing account by email, leaves its attributes alone, and answers 409 when taken', async () => {
    const existing = await createUser(t.db, { email: 'sam@corp.example', name: 'Sam Existing' });
    const linked = await scim('POST', '/Users', { payload: { externalId: 'sam-uid', userName: 'sam', emails: [{ type: 'work', value: 'SAM@corp.example' }], name: { formatted: 'Sam From IdP' } } });
    assert.equal(linked.statusCode, 201, linked.body);
    assert.equal(linked.json().userName, existing.username);
    assert.equal(linked.json().name.formatted, 'Sam Existing');
    // Its name belongs to its owner: the patch succeeds and changes nothing (the Service since 15.0).
    assert.equal((await scim('PATCH', '/Users/sam-uid', { payload: { Operations: [{ op: 'replace', path: 'name.formatted', value: 'Taken Over' }, { op: 'replace', path: 'emails[type eq "work"].value', value: 'evil@x.example' }] } })).statusCode, 204);
    const row = await t.db.selectFrom('users').selectAll().where('id', '=', existing.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Sam Existing');
    assert.equal(row.email, 'sam@corp.example');

    // The same account under another extern_uid: 409 uniqueness.
    assertScimError(await scim('POST', '/Users', { payload: { externalId: 'sam-other', userName: 'sam2', emails: [{ type: 'work', value: 'sam@corp.example' }], name: { formatted: 'Sam' } } }), 409, 'uniqueness');
    // The same extern_uid again answers the identity it already is.
    assert.equal((await scim('POST', '/Users', { payload: { externalId: 'SAM-UID', userName: 'sam', emails: [{ type: 'work', value: 'sam@corp.example' }] } })).statusCode, 201);
    // ... and gives back a membership an owner removed meanwhile.
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/groups/${groupId}/members/${existing.id}`, token: ownerToken })).statusCode, 204);
    assert.equal((await scim('POST', '/Users', { payload: { externalId: 'sam-uid', userName: 'sam', emails: [{ type: 'work', value: 'sam@corp.example' }] } })).statusCode, 201);
    assert.ok(await t.db.selectFrom('members').select('id').where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', existing.id).executeTakeFirst());

    // A taken username gets a counter; a taken email on PATCH is 409.
    const dup = await scim('POST', '/Users', { payload: { externalId: 'sam-twin', userName: `${existing.username}@elsewhere.example`, emails: [{ type: 'work', value: 'twin@corp.example' }], name: { formatted: 'Sam Twin' } } });
    assert.equal(dup.statusCode, 201, dup.body);
    assert.equal(dup.json().userName, `${existing.username}1`);
    assertScimError(await scim('PATCH', '/Users/sam-twin', { payload: { Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'sam@corp.example' }] } }), 409, 'uniqueness');
    assertScimError(await scim('PATCH', '/Users/sam-twin', { payload: { Operations: [{ op: 'replace', path: 'externalId', value: 'sam-uid' }] } }), 409, 'uniqueness');
    // A username a group holds as its path is taken too.
    assertScimError(await scim('PATCH', '/Users/sam-twin', { payload: { Operations: [{ op: 'replace', path: 'userName', value: otherGroupPath }] } }), 409, 'uniqueness');

    // The same person provisioned by a second group: a second group_saml identity.
    const inOther = await scim('POST', '/Users', { token: otherScimToken, group: otherGroupPath, payload: { externalId: 'sam-in-other', userName: 'sam', emails: [{ type: 'work', value: 'sam@corp.example' }] } });
    assert.equal(inOther.statusCode, 201, inOther.body);
    const identities = (await t.request({ url: `/api/v4/users/${existing.id}`, token: ROOT_TOKEN })).json().identities;
    assert.deepEqual(identities.map((i: { extern_uid: string }) => i.extern_uid).sort(), ['sam-in-other', 'sam-uid']);
    // Each group sees only its own identities.
    assertScimError(await scim('GET', '/Users/sam-in-other'), 404);
  });

  it('deprovisioning removes the memberships of sub-groups and their projects; concurrent creates never fail', async () => {
    const created = await scim('POST', '/Users', { payload: { externalId: 'deep-uid', userName: 'deep', emails: [{ type: 'work', value: 'deep@corp.example' }], name: { formatted: 'Deep Member' } } });
    assert.equal(created.statusCode, 201, created.body);
    const deep = await t.db.selectFrom('users').selectAll().where('email', '=', 'deep@corp.example').executeTakeFirstOrThrow();
    const sub = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Deep', path: 'deep-sub', parent_id: groupId } })).json();
    const project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Deep Project', namespace_id: sub.id } })).json();
    const personal = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Elsewhere' } })).json();
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${sub.id}/members`, token: ownerToken, payload: { user_id: deep.id, access_level: 30 } })).statusCode, 201);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: { user_id: deep.id, access_level: 30 } })).statusCode, 201);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${personal.id}/members`, token: ownerToken, payload: { user_id: deep.id, access_level: 30 } })).statusCode, 201);

    assert.equal((await scim('DELETE', '/Users/deep-uid')).statusCode, 204);
    const left = await t.db.selectFrom('members').select(['source_type', 'source_id']).where('user_id', '=', deep.id).execute();
    // Only the membership outside the group remains.
    assert.deepEqual(left, [{ source_type: 'Project', source_id: personal.id }]);

    // Listed by SAML provider among the users, as administrators see them.
    const provider = await t.db.selectFrom('saml_providers').select('id').where('group_id', '=', groupId).executeTakeFirstOrThrow();
    const bySaml = (await t.request({ url: `/api/v4/users?saml_provider_id=${provider.id}&per_page=100`, token: ROOT_TOKEN })).json();
    assert.ok(bySaml.some((u: { id: number }) => u.id === deep.id));

    const body = { externalId: 'race-uid', userName: 'racer', emails: [{ type: 'work', value: 'racer@corp.example' }], name: { formatted: 'Racer' } };
    const results = await Promise.all(Array.from({ length: 5 }, () => scim('POST', '/Users', { payload: body })));
    for (const r of results) assert.ok(r.statusCode === 201 || r.statusCode === 409, r.body);
    assert.ok(results.some((r) => r.statusCode === 201));
    assert.equal((await t.db.selectFrom('users').select('id').where('email', '=', 'racer@corp.example').execute()).length, 1);
    assert.equal((await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "race-uid"')}`)).json().totalResults, 1);
  });

  it('refuses to deprovision the last owner', async () => {
    await scim('POST', '/Users', { payload: { externalId: 'owner-uid', userName: owner.username, emails: [{ type: 'work', value: owner.email }] } });
    const res = await scim('PATCH', '/Users/owner-uid', { payload: { Operations: [{ op: 'replace', path: 'active', value: false }] } });
    assertScimError(res, 412);
    assert.match(res.json().detail, /Cannot remove last group owner/);
    assert.equal((await t.db.selectFrom('members').select('access_level').where('source_type', '=', 'Namespace').where('source_id', '=', groupId).where('user_id', '=', owner.id).executeTakeFirstOrThrow()).access_level, 50);
  });
});
