import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

const EMPTY = { emoji: null, message: null, availability: null, message_html: null, clear_status_at: null };

describe('user status', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db, { username: 'Alice.Status' });
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
  });
  after(async () => { await t.close(); });

  const put = (payload: Record<string, unknown>, token = aliceToken) =>
    t.request({ method: 'PUT', url: '/api/v4/user/status', token, payload });
  const patch = (payload: Record<string, unknown>, token = aliceToken) =>
    t.request({ method: 'PATCH', url: '/api/v4/user/status', token, payload });
  const stored = (userId: number) => t.db.selectFrom('user_statuses').selectAll().where('user_id', '=', userId).executeTakeFirst();

  it('answers every field null when no status is set, for self, others and anonymous callers', async () => {
    const own = await t.request({ url: '/api/v4/user/status', token: bobToken });
    assert.equal(own.statusCode, 200);
    assert.deepEqual(own.json(), EMPTY);
    const anon = await t.request({ url: `/api/v4/users/${bob.id}/status` });
    assert.equal(anon.statusCode, 200);
    assert.deepEqual(anon.json(), EMPTY);
  });

  it('requires authentication for the own status and its writes', async () => {
    assert.equal((await t.request({ url: '/api/v4/user/status' })).statusCode, 401);
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/status', payload: { message: 'x' } });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    assert.equal((await t.request({ method: 'PATCH', url: '/api/v4/user/status', payload: { message: 'x' } })).statusCode, 401);
  });

  it('sets a status with PUT, rendering message_html as the Service does', async () => {
    const res = await put({ emoji: 'coffee', message: 'I crave <coffee> & :coffee:', availability: 'busy' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      emoji: 'coffee',
      message: 'I crave <coffee> & :coffee:',
      availability: 'busy',
      message_html: 'I crave &lt;coffee&gt; &amp; <gl-emoji title="hot beverage" data-name="coffee" data-unicode-version="4.0">☕</gl-emoji>',
      clear_status_at: null,
    });
    const row = await stored(alice.id);
    assert.equal(row?.emoji, 'coffee');
    assert.equal(row?.availability, 'busy');
  });

  it('reads a status by id and by case-insensitive username without authentication', async () => {
    const byId = await t.request({ url: `/api/v4/users/${alice.id}/status` });
    assert.equal(byId.statusCode, 200);
    assert.equal(byId.json().emoji, 'coffee');
    const byName = await t.request({ url: '/api/v4/users/alice.status/status' });
    assert.equal(byName.statusCode, 200);
    assert.equal(byName.json().message, 'I crave <coffee> & :coffee:');
    const missing = await t.request({ url: '/api/v4/users/nobody-here/status' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 User Not Found' });
    assert.equal((await t.request({ url: '/api/v4/users/999999/status' })).statusCode, 404);
  });

  it('defaults the emoji to speech_balloon and nulls what PUT does not send (availability stays)', async () => {
    const res = await put({ message: 'only a message' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().emoji, 'speech_balloon');
    assert.equal(res.json().message, 'only a message');
    assert.equal(res.json().message_html, 'only a message');
    // The Service drops a blank availability instead of resetting it.
    assert.equal(res.json().availability, 'busy');
    const emojiOnly = await put({ emoji: 'rocket' });
    assert.equal(emojiOnly.json().message, null);
    assert.equal(emojiOnly.json().message_html, null);
  });

  it('sets clear_status_at from clear_status_after, and PUT without it clears the interval', async () => {
    const before = Date.now();
    const res = await put({ emoji: 'palm_tree', message: 'away', clear_status_after: '3_hours' });
    assert.equal(res.statusCode, 200);
    const at = Date.parse(res.json().clear_status_at);
    assert.ok(at >= before + 3 * 3600_000 - 1000 && at <= Date.now() + 3 * 3600_000 + 1000);
    const again = await put({ emoji: 'palm_tree', message: 'away' });
    assert.equal(again.json().clear_status_at, null);
  });

  it('refuses an unknown clear_status_after and an unknown availability with Grape errors', async () => {
    const res = await put({ message: 'x', clear_status_after: '2_hours' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'clear_status_after does not have a valid value' });
    const avail = await put({ message: 'x', availability: 'away' });
    assert.equal(avail.statusCode, 400);
    assert.deepEqual(avail.json(), { error: 'availability does not have a valid value' });
  });

  it('refuses unknown emoji and long messages with the model errors', async () => {
    const res = await put({ emoji: 'does not exist', message: 'x'.repeat(101) });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      message: { emoji: ['is not included in the list'], message: ['is too long (maximum is 100 characters)'] },
    });
    // 100 characters (emoji count as one each) are fine.
    const ok = await put({ message: '👍'.repeat(100) });
    assert.equal(ok.statusCode, 200);
  });

  it('deletes the status when emoji and message are both blank, whatever availability says, and answers the empty status', async () => {
    await put({ emoji: 'coffee', message: 'here' });
    const res = await put({});
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), EMPTY);
    assert.equal(await stored(alice.id), undefined);
    await put({ emoji: 'coffee', message: 'here', availability: 'busy' });
    const busy = await put({ emoji: '', message: ' ', availability: 'busy' });
    assert.equal(busy.statusCode, 200);
    assert.deepEqual(busy.json(), EMPTY);
    assert.equal(await stored(alice.id), undefined);
    const read = await t.request({ url: '/api/v4/user/status', token: aliceToken });
    assert.deepEqual(read.json(), EMPTY);
  });

  it('PATCH changes only what is sent, and answers null without parameters', async () => {
    await put({ emoji: 'coffee', message: 'first', clear_status_after: '1_day' });
    const before = (await stored(alice.id))!;
    const res = await patch({ message: 'second' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().emoji, 'coffee');
    assert.equal(res.json().message, 'second');
    assert.equal(res.json().clear_status_at, before.clear_status_at);
    const avail = await patch({ availability: 'busy' });
    assert.equal(avail.json().availability, 'busy');
    assert.equal(avail.json().message, 'second');
    const none = await patch({});
    assert.equal(none.statusCode, 200);
    assert.equal(none.body, 'null');
    assert.equal((await stored(alice.id))?.message, 'second');
  });

  it('treats a status past clear_status_at as cleared and removes it', async () => {
    await put({ emoji: 'coffee', message: 'brb', clear_status_after: '30_minutes' }, bobToken);
    await t.db.updateTable('user_statuses').set({ clear_status_at: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', bob.id).execute();
    const res = await t.request({ url: `/api/v4/users/${bob.username}/status` });
    assert.deepEqual(res.json(), EMPTY);
    assert.equal(await stored(bob.id), undefined);
    // A PATCH after expiry starts from nothing, so the old message does not come back.
    await put({ emoji: 'coffee', message: 'brb', clear_status_after: '30_minutes' }, bobToken);
    await t.db.updateTable('user_statuses').set({ clear_status_at: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', bob.id).execute();
    const patched = await patch({ emoji: 'rocket' }, bobToken);
    assert.equal(patched.json().emoji, 'rocket');
    assert.equal(patched.json().message, null);
    assert.equal(patched.json().clear_status_at, null);
  });

  it('lets an administrator act through sudo', async () => {
    const res = await t.request({ method: 'PUT', url: `/api/v4/user/status?sudo=${bob.id}`, token: ROOT_TOKEN, payload: { message: 'sudo' } });
    assert.equal(res.statusCode, 200);
    assert.equal((await stored(bob.id))?.message, 'sudo');
  });
});
