/**
 * Values derived from what is already stored, made at the same moment by several requests
 * (issue 35, item 1: "every other read-then-insert of a derived value"): each request gets its
 * own value, none answers a 5xx or a refusal that only the race caused.
 *
 * - Bot usernames of access tokens (`project_<id>_bot`, then `…bot1`, `…bot2`; the Service's Uniquify).
 * - SCIM usernames from the same userName (`test_user`, `test_user1`, …).
 * - The ghost user, created by the first soft deletion, whichever of several comes first.
 * - The follow limit (300): followers at the limit cannot pass it by following at once.
 * - A group's last owner: two owners removed or demoted at once cannot leave it without one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { startScimFixture, type ScimFixture } from '../helpers/scim.ts';
import { MAX_FOLLOWEE_LIMIT } from '../../src/domain/follows/follows.queries.ts';
import { nowIso } from '../../src/domain/clock.ts';

const AT_ONCE = 12;

describe('derived values made at once', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('gives access tokens created at once bots of distinct usernames, without a refusal', async () => {
    const owner = await createUser(t.db);
    const token = await createToken(t.db, owner, { scopes: ['api'] });
    const created = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'Bots at once' } });
    const project = created.json() as { id: number };
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/access_tokens`, token, payload: { name: `bot ${i}`, scopes: ['api'] },
    })));
    assert.deepEqual(answers.filter((r) => r.statusCode !== 201).map((r) => `${r.statusCode} ${r.body}`), []);
    const userIds = answers.map((r) => (r.json() as { user_id: number }).user_id);
    const bots = await t.db.selectFrom('users').select('username').where('id', 'in', userIds).execute();
    const base = `project_${project.id}_bot`;
    const expected = [base, ...Array.from({ length: AT_ONCE - 1 }, (_, i) => `${base}${i + 1}`)];
    assert.deepEqual(bots.map((b) => b.username).sort(), expected.sort());
  });

  it('creates the ghost user once when users are soft-deleted at once', async () => {
    assert.equal(await t.db.selectFrom('users').select('id').where('user_type', '=', 5).executeTakeFirst(), undefined);
    const users = await Promise.all(Array.from({ length: 6 }, () => createUser(t.db)));
    const answers = await Promise.all(users.map((u) => t.request({ method: 'DELETE', url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN })));
    assert.deepEqual(answers.filter((r) => r.statusCode !== 204).map((r) => `${r.statusCode} ${r.body}`), []);
    const ghosts = await t.db.selectFrom('users').select('username').where('user_type', '=', 5).execute();
    assert.deepEqual(ghosts, [{ username: 'ghost' }]);
  });

  it('keeps a user at the follow limit from passing it by following several users at once', async () => {
    const follower = await createUser(t.db);
    const token = await createToken(t.db, follower, { scopes: ['api'] });
    const followed = await Promise.all(Array.from({ length: MAX_FOLLOWEE_LIMIT - 1 + 5 }, () => createUser(t.db)));
    const now = nowIso();
    const rows = followed.slice(0, MAX_FOLLOWEE_LIMIT - 1).map((u) => ({ follower_id: follower.id, followee_id: u.id, created_at: now }));
    await t.db.insertInto('user_follows').values(rows).execute();
    const follow = (id: number) => t.request({ method: 'POST', url: `/api/v4/users/${id}/follow`, token });
    const answers = await Promise.all(followed.slice(MAX_FOLLOWEE_LIMIT - 1).map((u) => follow(u.id)));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400]);
    const n = await t.db.selectFrom('user_follows').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('follower_id', '=', follower.id).executeTakeFirstOrThrow();
    assert.equal(Number(n.n), MAX_FOLLOWEE_LIMIT);
  });
});

describe('a group\'s owners changed at once', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  async function groupWithTwoOwners() {
    const first = await createUser(t.db);
    const second = await createUser(t.db);
    const token = await createToken(t.db, first, { scopes: ['api'] });
    const payload = { name: `Owned ${first.id}`, path: `owned-${first.id}` };
    const created = await t.request({ method: 'POST', url: '/api/v4/groups', token, payload });
    assert.equal(created.statusCode, 201, created.body);
    const group = created.json() as { id: number };
    const added = await t.request({
      method: 'POST', url: `/api/v4/groups/${group.id}/members`, token, payload: { user_id: second.id, access_level: 50 },
    });
    assert.equal(added.statusCode, 201, added.body);
    const owners = async () => (await t.db.selectFrom('members').select('user_id')
      .where('source_type', '=', 'Namespace').where('source_id', '=', group.id).where('access_level', '=', 50).execute()).length;
    return { group, users: [first, second], owners };
  }

  it('keeps one owner when both are removed at once', async () => {
    const { group, users, owners } = await groupWithTwoOwners();
    const remove = (id: number) => t.request({ method: 'DELETE', url: `/api/v4/groups/${group.id}/members/${id}`, token: ROOT_TOKEN });
    const answers = await Promise.all(users.map((u) => remove(u.id)));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [204, 403]);
    assert.equal(await owners(), 1);
  });

  it('keeps one owner when both are demoted at once', async () => {
    const { group, users, owners } = await groupWithTwoOwners();
    const answers = await Promise.all(users.map((u) => t.request({
      method: 'PUT', url: `/api/v4/groups/${group.id}/members/${u.id}`, token: ROOT_TOKEN, payload: { access_level: 40 },
    })));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 403]);
    assert.equal(await owners(), 1);
  });
});

describe('SCIM usernames made at once', () => {
  let f: ScimFixture;
  before(async () => { f = await startScimFixture(); });
  after(async () => { await f.t.close(); });

  it('gives accounts provisioned at once from the same userName distinct usernames', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => f.scim('POST', '/Users', { payload: {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], externalId: `race-${i}`, userName: 'same.name@example.com',
      name: { givenName: 'Same', familyName: `Name ${i}` }, active: true,
      emails: [{ primary: true, value: `same.name.${i}@example.com`, type: 'work' }],
    } })));
    assert.deepEqual(answers.filter((r) => r.statusCode !== 201).map((r) => `${r.statusCode} ${r.body}`), []);
    const names = answers.map((r) => (r.json() as { userName: string }).userName).sort();
    assert.deepEqual(names, ['same.name', 'same.name1', 'same.name2', 'same.name3', 'same.name4', 'same.name5']);
  });
});
