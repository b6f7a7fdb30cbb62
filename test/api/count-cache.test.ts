import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';

// Totals come from a remembered capped count (src/db/read-cache.ts); a write must show at once.
describe('pagination totals after writes', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < 5; i++) await createUser(t.db);
  });
  after(async () => { await t.close(); });

  const total = async () => {
    // page 2 forces a count query (page 1 short enough to count itself would not).
    const res = await t.request({ url: '/api/v4/users?per_page=2&page=2', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    return Number(res.headers['x-total']);
  };

  it('reuses the count between reads and recounts after every kind of write', async () => {
    const first = await total();
    assert.equal(first, 6);
    assert.equal(await total(), 6);
    const created = await createUser(t.db);
    assert.equal(await total(), 7);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${created.id}?hard_delete=true`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    assert.equal(await total(), 6);
  });
});

// Profile rows are remembered until the next write (src/db/read-cache.ts).
describe('user reads after writes', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('shows a change made through the database handle on the very next read', async () => {
    const u = await createUser(t.db, { name: 'Before' });
    const read = async () => (await t.request({ url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN })).json();
    assert.equal((await read()).name, 'Before');
    assert.equal((await read()).name, 'Before');
    await t.db.updateTable('users').set({ name: 'After' }).where('id', '=', u.id).execute();
    assert.equal((await read()).name, 'After');
    const follow = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/follow`, token: ROOT_TOKEN });
    assert.equal(follow.statusCode, 201);
    assert.equal((await read()).followers, 1);
  });
});

// A transaction's writes reach other connections only when it commits. On PostgreSQL a read on
// another pooled connection between the transaction's last statement and its commit sees the old
// row; the commit moves the write epoch so that such a read is not remembered past it. (SQLite has
// one connection: that read waits for the commit, and this test would wait for itself.)
describe('user reads around a transaction', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('does not remember a row read while a writing transaction was still open', { skip: process.env.KILN_TEST_DB !== 'postgres' ? 'PostgreSQL only: SQLite has one connection' : false }, async () => {
    const u = await createUser(t.db, { name: 'Committed' });
    const read = async () => (await t.request({ url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN })).json().name;
    await t.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ name: 'Uncommitted' }).where('id', '=', u.id).execute();
      assert.equal(await read(), 'Committed');
    });
    assert.equal(await read(), 'Uncommitted');
  });

  it('leaves the epoch alone when a transaction only read', async () => {
    const epoch = t.writes.value;
    await t.db.transaction().execute(async (trx) => trx.selectFrom('users').select('id').execute());
    assert.equal(t.writes.value, epoch);
    await t.db.transaction().execute(async (trx) => trx.updateTable('users').set({ bio: 'x' }).where('id', '=', 1).execute());
    assert.ok(t.writes.value > epoch);
  });
});
