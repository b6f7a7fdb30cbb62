/**
 * Uniqueness rules that span tables (issue 13), enforced by the database so that racing requests
 * leave one owner. One address, one user: primary and secondary emails share one space that the
 * database enforces (migration 2026-11-24T1300), so requests racing for one address leave it
 * with exactly one user, and the losers get the Service's 400 (POST …/emails) or 409 (POST and
 * PUT /users) rather than a second owner or a 500.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { UserRow } from '../../src/db/types.ts';
import { isUniqueViolation } from '../../src/db/constraints.ts';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('email addresses are unique across primary and secondary emails', () => {
  let t: TestApp;
  const users: UserRow[] = [];
  const tokens: string[] = [];
  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < 25; i++) {
      users.push(await createUser(t.db));
      tokens.push(await createToken(t.db, users[i]));
    }
  });
  after(async () => { await t.close(); });

  /** Every user holding `address` as a primary or secondary email. */
  async function owners(address: string): Promise<number[]> {
    const lower = address.toLowerCase();
    const primary = await t.db.selectFrom('users').select('id').where(sql`lower(email)`, '=', lower).execute();
    const secondary = await t.db.selectFrom('emails').select('user_id').where(sql`lower(email)`, '=', lower).execute();
    return [...new Set([...primary.map((r) => r.id), ...secondary.map((r) => r.user_id)])];
  }

  const addSecondary = (i: number, email: string) =>
    t.request({ method: 'POST', url: '/api/v4/user/emails', token: tokens[i], payload: { email } });
  let seq = 0;
  const createWithPrimary = (email: string) => {
    seq += 1;
    return t.request({
      method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN,
      payload: { email, username: `racer${seq}`, name: `Racer ${seq}`, password: 'a-long-enough-password-1' },
    });
  };

  it('gives one address to one user when 25 POST /user/emails race 25 POST /users', async () => {
    const address = 'Contested@Example.org';
    const results = await Promise.all(users.flatMap((_, i) => [
      addSecondary(i, i % 2 ? address : address.toLowerCase()),
      createWithPrimary(i % 2 ? address.toUpperCase() : address),
    ]));
    const statuses = results.map((r) => r.statusCode);
    assert.deepEqual(statuses.filter((s) => ![201, 400, 409].includes(s)), [], `unexpected statuses ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
    for (const r of results) {
      if (r.statusCode === 400) assert.deepEqual(r.json(), { message: { email: ['has already been taken'] } });
      if (r.statusCode === 409) assert.deepEqual(r.json(), { message: 'Email has already been taken' });
    }
    assert.equal((await owners(address)).length, 1);
  });

  it('keeps each of 25 addresses with one user when a secondary and a new primary race for it', async () => {
    const results = await Promise.all(users.flatMap((_, i) => [addSecondary(i, `pair${i}@example.org`), createWithPrimary(`PAIR${i}@example.org`)]));
    assert.deepEqual(results.map((r) => r.statusCode).filter((s) => ![201, 400, 409].includes(s)), []);
    for (let i = 0; i < users.length; i++) {
      assert.equal((await owners(`pair${i}@example.org`)).length, 1, `pair${i}`);
      assert.equal((results[2 * i].statusCode === 201 ? 1 : 0) + (results[2 * i + 1].statusCode === 201 ? 1 : 0), 1);
    }
  });

  it('races PUT /users/:id email changes against secondaries: 409 or 400 for the loser, one owner', async () => {
    const results = await Promise.all(users.slice(0, 12).flatMap((_, i) => [
      addSecondary(i, `moved${i}@example.org`),
      t.request({ method: 'PUT', url: `/api/v4/users/${users[i + 12].id}`, token: ROOT_TOKEN, payload: { email: `Moved${i}@example.org` } }),
    ]));
    assert.deepEqual(results.map((r) => r.statusCode).filter((s) => ![200, 201, 400, 409].includes(s)), []);
    for (let i = 0; i < 12; i++) assert.equal((await owners(`moved${i}@example.org`)).length, 1);
  });

  it('refuses a direct second owner in the database, and frees an address when its email goes', async () => {
    const [a, b] = [users[23], users[24]];
    const res = await addSecondary(23, 'freed@example.org');
    assert.equal(res.statusCode, 201);
    // The database refuses it as a unique violation on both engines (what the routes turn into 400/409).
    await assert.rejects(t.db.updateTable('users').set({ email: 'FREED@example.org' }).where('id', '=', b.id).execute(), (err) => isUniqueViolation(err));
    await assert.rejects(t.db.insertInto('emails').values({ user_id: b.id, email: 'freed@EXAMPLE.org', created_at: '2026-01-01', updated_at: '2026-01-01' }).execute(), (err) => isUniqueViolation(err));
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/user/emails/${res.json().id}`, token: tokens[23] })).statusCode, 204);
    const taken = await t.request({ method: 'PUT', url: `/api/v4/users/${b.id}`, token: ROOT_TOKEN, payload: { email: 'freed@example.org' } });
    assert.equal(taken.statusCode, 200);
    // The old primary is free again for someone else; the new one is not.
    assert.equal((await addSecondary(23, b.email)).statusCode, 201);
    assert.equal((await addSecondary(23, 'Freed@example.org')).statusCode, 400);
    assert.deepEqual(await owners('freed@example.org'), [b.id]);
    assert.notEqual(a.id, b.id);
  });

  it('frees every address of a deleted user', async () => {
    const victim = await createUser(t.db);
    const token = await createToken(t.db, victim);
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/user/emails', token, payload: { email: 'gone@example.org' } })).statusCode, 201);
    await t.db.deleteFrom('users').where('id', '=', victim.id).execute();
    assert.equal((await addSecondary(0, 'gone@example.org')).statusCode, 201);
    assert.equal((await addSecondary(1, victim.email)).statusCode, 201);
  });
});

describe('usernames and top-level group paths share one space', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('gives a contested top-level path to one of 10 racing POST /users and 10 POST /groups, the rest 400/409', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => [
      t.request({
        method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN,
        payload: { email: `top${i}@example.org`, username: i % 2 ? 'TopLevel' : 'toplevel', name: 'Top', password: 'a-long-enough-password-1' },
      }),
      t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: `Top ${i}`, path: i % 2 ? 'toplevel' : 'TOPLEVEL' } }),
    ]).flat());
    const statuses = results.map((r) => r.statusCode);
    assert.deepEqual(statuses.filter((s) => ![201, 400, 409].includes(s)), [], statuses.join(','));
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
    const rows = await t.db.selectFrom('namespaces').select('id').where('parent_id', 'is', null).where(sql`lower(path)`, '=', 'toplevel').execute();
    assert.equal(rows.length, 1);
  });
});

describe('a project and a sub-group share their parent group\'s paths', () => {
  let t: TestApp;
  let groupId: number;
  before(async () => {
    t = await startTestApp();
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Parent', path: 'parent' } });
    groupId = group.json().id;
  });
  after(async () => { await t.close(); });

  const project = (path: string) => t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { path, namespace_id: groupId } });
  const subgroup = (path: string) => t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: path, path, parent_id: groupId } });

  it('refuses a project at a sub-group\'s path and a sub-group at a project\'s path, in either case', async () => {
    assert.equal((await subgroup('taken-by-group')).statusCode, 201);
    const p = await project('Taken-By-Group');
    assert.deepEqual([p.statusCode, p.json().message.path], [400, ['has already been taken']]);
    assert.equal((await project('taken-by-project')).statusCode, 201);
    const g = await subgroup('TAKEN-by-project');
    assert.deepEqual([g.statusCode, g.json().message.path], [400, ['has already been taken']]);
  });

  it('gives a contested path to one of 8 racing projects and 8 racing sub-groups', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => [project(i % 2 ? 'contested' : 'Contested'), subgroup(i % 2 ? 'CONTESTED' : 'contested')]).flat());
    const statuses = results.map((r) => r.statusCode);
    assert.deepEqual(statuses.filter((s) => s !== 201 && s !== 400), [], statuses.join(','));
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
  });

  it('frees the path when the project goes', async () => {
    const p = await project('freed-path');
    assert.equal(p.statusCode, 201);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.json().id}`, token: ROOT_TOKEN })).statusCode, 202);
    await t.db.deleteFrom('projects').where('id', '=', p.json().id).execute();
    assert.equal((await subgroup('freed-path')).statusCode, 201);
  });
});
