/**
 * The user entities' fields in the Service's order (reference §1.3: UserSafe, UserBasic, User,
 * UserPublic, UserWithAdmin, UserDetailsWithAdmin, each adding its fields after its parent's).
 * kiln writes them with JSON.stringify, which keeps the order the presenter built.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

const BASIC = ['id', 'username', 'name', 'state', 'avatar_url', 'web_url'];
const USER_HEAD = ['bio', 'location', 'public_email', 'skype', 'linkedin', 'twitter', 'discord', 'website_url', 'organization', 'job_title', 'pronouns', 'bot', 'work_information'];
const PUBLIC = ['last_sign_in_at', 'confirmed_at', 'last_activity_on', 'email', 'theme_id', 'color_scheme_id', 'projects_limit', 'current_sign_in_at', 'identities', 'can_create_group', 'can_create_project', 'two_factor_enabled', 'external', 'private_profile', 'commit_email'];
/** User as a viewer who may read the profile sees it. */
const user = (followed: boolean) => [...BASIC, 'created_at', ...USER_HEAD, 'followers', 'following', ...(followed ? ['is_followed'] : []), 'local_time'];

describe('user entities, field order', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let hidden: UserRow;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    hidden = await createUser(t.db, { private_profile: 1 });
  });
  after(async () => { await t.close(); });

  it('User: created_at after web_url, the follow counts before local_time', async () => {
    const res = await t.request({ url: `/api/v4/users/${alice.id}`, token: aliceToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Object.keys(res.json()), user(true));
    const anonymous = await t.request({ url: `/api/v4/users/${alice.id}` });
    assert.deepEqual(Object.keys(anonymous.json()), user(false));
  });

  it('User of a private profile: without created_at and the follow counts', async () => {
    const res = await t.request({ url: `/api/v4/users/${hidden.id}`, token: aliceToken });
    assert.deepEqual(Object.keys(res.json()), [...BASIC, ...USER_HEAD, 'local_time']);
  });

  it('UserPublic (GET /user) and UserDetailsWithAdmin (an administrator reading a user)', async () => {
    const me = await t.request({ url: '/api/v4/user', token: aliceToken });
    assert.deepEqual(Object.keys(me.json()), [...user(true), ...PUBLIC]);
    const admin = await t.request({ url: `/api/v4/users/${alice.id}`, token: ROOT_TOKEN });
    assert.deepEqual(Object.keys(admin.json()), [...user(true), ...PUBLIC, 'is_admin', 'note', 'namespace_id', 'highest_role', 'current_sign_in_ip', 'last_sign_in_ip', 'sign_in_count']);
  });

  it('UserWithAdmin in the list, custom_attributes before web_url', async () => {
    await t.request({ method: 'PUT', url: `/api/v4/users/${alice.id}/custom_attributes/team`, token: ROOT_TOKEN, payload: { value: 'blue' } });
    const list = await t.request({ url: `/api/v4/users?username=${alice.username}&with_custom_attributes=true`, token: ROOT_TOKEN });
    assert.equal(list.statusCode, 200);
    const [entity] = list.json() as Record<string, unknown>[];
    const withAttributes = [...BASIC.slice(0, 5), 'custom_attributes', 'web_url', ...user(true).slice(BASIC.length)];
    assert.deepEqual(Object.keys(entity), [...withAttributes, ...PUBLIC, 'is_admin', 'note', 'namespace_id']);
    assert.deepEqual(entity.custom_attributes, [{ key: 'team', value: 'blue' }]);
  });
});
