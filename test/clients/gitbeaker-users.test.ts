/**
 * The users area driven by @gitbeaker/rest, unchanged, against a listening kiln (reference
 * clients.md §2): Users, UserSSHKeys, UserGPGKeys, UserEmails, UserImpersonationTokens and
 * PersonalAccessTokens, with `token` (PRIVATE-TOKEN), `oauthToken` (Bearer) and `sudo` (header).
 * Every write is checked in the database too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { createOauthToken, createToken, createUser } from '../helpers/factories.ts';
import { gpgPublicKey, sshFingerprints, sshPublicKey } from '../helpers/keys.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

type RequestError = Error & { cause?: { description?: string; response?: Response } };

/** Asserts that the client rejected with this status (and, when given, this error text). */
async function rejectsWith(promise: Promise<unknown>, status: number, description?: string): Promise<void> {
  await assert.rejects(promise, (err: RequestError) => {
    assert.equal(err.cause?.response?.status, status);
    if (description !== undefined) assert.equal(err.cause?.description, description);
    return true;
  });
}

function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

describe('@gitbeaker/rest: the users area', () => {
  let t: ListeningTestApp;
  let admin: InstanceType<typeof Gitlab>;

  before(async () => {
    t = await startListeningApp();
    admin = new Gitlab({ host: t.url, token: ROOT_TOKEN });
  });
  after(async () => { await t.close(); });

  const userRow = (id: number) => t.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

  it('creates, shows, edits and lists users, following Link to the end', async () => {
    const created = await admin.Users.create({
      email: 'gb.alice@example.com', username: 'gb_alice', name: 'Alice Gitbeaker', password: 'correct-horse-battery-9',
      skipConfirmation: true, bio: 'Likes clients', projectsLimit: 7, canCreateGroup: false,
    });
    assert.equal(created.username, 'gb_alice');
    assert.equal(created.email, 'gb.alice@example.com');
    assert.equal(created.bio, 'Likes clients');
    assert.equal(created.projects_limit, 7, 'camelCase options arrive snake_cased');
    assert.equal(created.can_create_group, false);
    assert.equal(created.state, 'active');
    assert.equal(created.web_url, `${t.url}/gb_alice`);
    const row = await userRow(created.id);
    assert.equal(row?.username, 'gb_alice');
    assert.ok(row?.confirmed_at, 'skip_confirmation confirmed the email');

    const shown = await admin.Users.show(created.id);
    assert.equal(shown.id, created.id);
    assert.equal(shown.name, 'Alice Gitbeaker');

    // Users.edit sends multipart/form-data.
    const edited = await admin.Users.edit(created.id, { name: 'Alice G.', location: 'Wonderland', note: 'edited by gitbeaker' });
    assert.equal(edited.name, 'Alice G.');
    assert.equal(edited.location, 'Wonderland');
    assert.equal(edited.note, 'edited by gitbeaker');
    const after = await userRow(created.id);
    assert.equal(after?.name, 'Alice G.');
    assert.equal(after?.location, 'Wonderland');

    for (let i = 0; i < 9; i++) await createUser(t.db);
    const expected = (await t.db.selectFrom('users').select('id').orderBy('id', 'desc').execute()).map((r) => r.id);
    assert.ok(expected.length >= 11);
    const all = await admin.Users.all({ perPage: 3 });
    assert.deepEqual(all.map((u) => u.id), expected, 'every user once, newest first, across pages of 3');

    const capped = await admin.Users.all({ perPage: 3, maxPages: 2 });
    assert.deepEqual(capped.map((u) => u.id), expected.slice(0, 6), 'maxPages 2 × perPage 3 stops after 6');

    const expanded = await admin.Users.all({ perPage: 4, page: 2, showExpanded: true });
    assert.deepEqual(expanded.data.map((u) => u.id), expected.slice(4, 8));
    assert.deepEqual(expanded.paginationInfo, {
      total: expected.length, next: 3, current: 2, previous: 1, perPage: 4, totalPages: Math.ceil(expected.length / 4),
    });

    const search = await admin.Users.all({ perPage: 1, search: 'gb_alice' });
    assert.deepEqual(search.map((u) => u.id), [created.id]);
  });

  it('shows the current user with a token, with an OAuth Bearer token and through sudo', async () => {
    const bob = await createUser(t.db, { name: 'Bob Sudo' });
    const viaToken = new Gitlab({ host: t.url, token: await createToken(t.db, bob) });
    assert.equal((await viaToken.Users.showCurrentUser()).id, bob.id);
    const viaBearer = new Gitlab({ host: t.url, oauthToken: await createOauthToken(t.db, bob, { scopes: ['read_user'] }) });
    const me = await viaBearer.Users.showCurrentUser();
    assert.equal(me.id, bob.id);
    assert.equal(me.email, bob.email);
    const viaSudo = new Gitlab({ host: t.url, token: ROOT_TOKEN, sudo: bob.username });
    assert.equal((await viaSudo.Users.showCurrentUser()).id, bob.id);
    assert.equal((await admin.Users.showCurrentUser({ sudo: bob.id })).id, bob.id, 'per-call sudo');
    assert.equal((await admin.Users.showCurrentUser()).id, 1);
  });

  it('blocks, unblocks, deactivates, activates, bans and unbans with the literal bodies', async () => {
    const u = await createUser(t.db);
    const state = async () => (await userRow(u.id))!.state;

    assert.equal(await admin.Users.block(u.id), true);
    assert.equal(await state(), 'blocked');
    // gitbeaker turns a falsy JSON body (null, false) into {}; the status and type still show it is JSON.
    const again = await admin.Users.block(u.id, { showExpanded: true });
    assert.equal(again.status, 201);
    assert.equal(again.headers['content-type'], 'application/json');
    assert.deepEqual(again.data, {});
    const raw = await fetch(`${t.url}/api/v4/users/${u.id}/block`, { method: 'POST', headers: { 'private-token': ROOT_TOKEN } });
    assert.equal(raw.status, 201);
    assert.equal(await raw.text(), 'null', 'blocking a blocked user answers the literal null');
    assert.equal(await state(), 'blocked');

    assert.equal(await admin.Users.unblock(u.id), true);
    assert.equal(await state(), 'active');
    const unblockActive = await admin.Users.unblock(u.id, { showExpanded: true });
    assert.equal(unblockActive.status, 201);
    assert.deepEqual(unblockActive.data, {});
    const rawFalse = await fetch(`${t.url}/api/v4/users/${u.id}/unblock`, { method: 'POST', headers: { 'private-token': ROOT_TOKEN } });
    assert.equal(await rawFalse.text(), 'false', 'unblocking an active user answers the literal false');

    assert.equal(await admin.Users.deactivate(u.id), true);
    assert.equal(await state(), 'deactivated');
    await rejectsWith(admin.Users.unblock(u.id), 403, '403 Forbidden - Deactivated users cannot be unblocked by the API');
    assert.equal(await admin.Users.activate(u.id), true);
    assert.equal(await state(), 'active');

    assert.equal(await admin.Users.ban(u.id), true);
    assert.equal(await state(), 'banned');
    await rejectsWith(admin.Users.ban(u.id), 403, 'You cannot ban banned users.');
    assert.equal(await admin.Users.unban(u.id), true);
    assert.equal(await state(), 'active');

    const plain = new Gitlab({ host: t.url, token: await createToken(t.db, await createUser(t.db)) });
    await rejectsWith(plain.Users.block(u.id), 403, '403 Forbidden');
  });

  it('follows and unfollows, listing followers page by page', async () => {
    const star = await createUser(t.db);
    const fans: UserRow[] = [];
    for (let i = 0; i < 3; i++) fans.push(await createUser(t.db));
    for (const fan of fans) {
      const api = new Gitlab({ host: t.url, token: await createToken(t.db, fan) });
      const followed = await api.Users.follow(star.id);
      assert.equal(followed.id, star.id);
      assert.equal(followed.username, star.username);
    }
    const first = new Gitlab({ host: t.url, token: await createToken(t.db, fans[0]!) });
    await rejectsWith(first.Users.follow(star.id), 304);

    const followers = await admin.Users.allFollowers(star.id, { perPage: 1 });
    assert.deepEqual(followers.map((u) => u.id).sort((a, b) => a - b), fans.map((f) => f.id));
    const following = await first.Users.allFollowing(fans[0]!.id);
    assert.deepEqual(following.map((u) => u.id), [star.id]);

    const unfollowed = await first.Users.unfollow(star.id);
    assert.equal(unfollowed.id, star.id);
    await rejectsWith(first.Users.unfollow(star.id), 304);
    const left = await admin.Users.allFollowers(star.id);
    assert.deepEqual(left.map((u) => u.id).sort((a, b) => a - b), fans.slice(1).map((f) => f.id));
  });

  it('sets and reads the status, preferences and counts of the current user', async () => {
    const carol = await createUser(t.db);
    const api = new Gitlab({ host: t.url, token: await createToken(t.db, carol) });

    const empty = await api.Users.showStatus();
    assert.deepEqual(empty, { emoji: null, message: null, availability: null, message_html: null, clear_status_at: null });
    const before = Date.now();
    const set = await api.Users.editStatus({ emoji: 'coffee', message: 'Out for lunch', clearStatusAfter: '3_hours' });
    assert.equal(set.emoji, 'coffee');
    assert.equal(set.message, 'Out for lunch');
    assert.ok(set.clear_status_at, 'clear_status_after became clear_status_at');
    const clearsAt = Date.parse(set.clear_status_at);
    assert.ok(clearsAt >= before + 3 * 3_600_000 - 60_000 && clearsAt <= Date.now() + 3 * 3_600_000 + 60_000);
    const stored = await t.db.selectFrom('user_statuses').selectAll().where('user_id', '=', carol.id).executeTakeFirst();
    assert.equal(stored?.message, 'Out for lunch');

    // Anyone may read a status, by username or by id, without credentials.
    const anonymous = new Gitlab({ host: t.url });
    assert.equal((await anonymous.Users.showStatus({ iDOrUsername: carol.username })).message, 'Out for lunch');
    assert.equal((await anonymous.Users.showStatus({ iDOrUsername: carol.id })).emoji, 'coffee');

    const prefs = await api.Users.showCurrentUserPreferences();
    assert.equal(prefs.user_id, carol.id);
    assert.equal(prefs.view_diffs_file_by_file, false);
    assert.equal(prefs.show_whitespace_in_diffs, true);
    const changed = await api.Users.editCurrentUserPreferences(true, false);
    assert.equal(changed.view_diffs_file_by_file, true);
    assert.equal(changed.show_whitespace_in_diffs, false);
    const row = await t.db.selectFrom('user_preferences').selectAll().where('user_id', '=', carol.id).executeTakeFirstOrThrow();
    assert.equal(row.view_diffs_file_by_file, 1);
    assert.equal(row.show_whitespace_in_diffs, 0);

    assert.deepEqual(await api.Users.showCount(), {
      merge_requests: 0, assigned_issues: 0, assigned_merge_requests: 0, review_requested_merge_requests: 0, todos: 0,
    });
  });

  it('manages SSH keys for oneself (Bearer) and for another user (administrator)', async () => {
    const dave = await createUser(t.db);
    const own = new Gitlab({ host: t.url, oauthToken: await createOauthToken(t.db, dave) });
    const line = sshPublicKey('ed25519', 'dave@laptop');
    const expiresAt = `${inDays(30)}T00:00:00.000Z`;
    const key = await own.UserSSHKeys.create('Laptop', line, { expiresAt, usageType: 'auth' });
    assert.equal(key.title, 'Laptop');
    // The key is shown publishable: algorithm and body, then the owner's name and the host.
    assert.equal(key.key, `${line.split(' ').slice(0, 2).join(' ')} ${dave.name} (127.0.0.1)`);
    assert.equal(key.usage_type, 'auth');
    assert.equal(Date.parse(key.expires_at as string), Date.parse(expiresAt));
    const row = await t.db.selectFrom('keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, dave.id);
    assert.equal(row.fingerprint_sha256, sshFingerprints(line).sha256);

    assert.deepEqual((await own.UserSSHKeys.all()).map((k) => k.id), [key.id]);
    assert.equal((await own.UserSSHKeys.show(key.id)).title, 'Laptop');

    const rsa = sshPublicKey('rsa', 'dave@server');
    const forDave = await admin.UserSSHKeys.create('Server', rsa, { userId: dave.id });
    assert.equal((await t.db.selectFrom('keys').select('user_id').where('id', '=', forDave.id).executeTakeFirstOrThrow()).user_id, dave.id);
    const listed = await admin.UserSSHKeys.all({ userId: dave.id });
    assert.deepEqual(listed.map((k) => k.id).sort((a, b) => a - b), [key.id, forDave.id]);
    assert.ok((await admin.UserSSHKeys.show(forDave.id, { userId: dave.id })).key.startsWith(rsa.split(' ').slice(0, 2).join(' ')));

    await rejectsWith(own.UserSSHKeys.create('Again', line), 400);

    await own.UserSSHKeys.remove(key.id);
    await admin.UserSSHKeys.remove(forDave.id, { userId: dave.id });
    assert.deepEqual(await own.UserSSHKeys.all(), []);
    assert.equal((await t.db.selectFrom('keys').select('id').where('user_id', '=', dave.id).execute()).length, 0);
    await rejectsWith(own.UserSSHKeys.show(key.id), 404, '404 Key Not Found');
  });

  it('manages GPG keys for oneself and for another user', async () => {
    const erin = await createUser(t.db);
    const own = new Gitlab({ host: t.url, token: await createToken(t.db, erin) });
    const mine = await gpgPublicKey([erin.email]);
    const key = await own.UserGPGKeys.create(mine.armored);
    assert.equal(key.key, mine.armored.trim(), 'stored stripped');
    const row = await t.db.selectFrom('gpg_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, erin.id);
    assert.equal(row.fingerprint, mine.fingerprint);
    assert.deepEqual((await own.UserGPGKeys.all()).map((k) => k.id), [key.id]);
    assert.equal((await own.UserGPGKeys.show(key.id)).key, mine.armored.trim());

    const other = await gpgPublicKey([erin.email]);
    const forErin = await admin.UserGPGKeys.create(other.armored, { userId: erin.id });
    const listed = await admin.UserGPGKeys.all({ userId: erin.id });
    assert.deepEqual(listed.map((k) => k.id).sort((a, b) => a - b), [key.id, forErin.id]);
    assert.equal((await admin.UserGPGKeys.show(forErin.id, { userId: erin.id })).key, other.armored.trim());

    await own.UserGPGKeys.remove(key.id);
    await admin.UserGPGKeys.remove(forErin.id, { userId: erin.id });
    assert.deepEqual(await own.UserGPGKeys.all(), []);
    assert.equal((await t.db.selectFrom('gpg_keys').select('id').where('user_id', '=', erin.id).execute()).length, 0);
  });

  it('manages secondary emails, including through sudo', async () => {
    const fay = await createUser(t.db);
    const own = new Gitlab({ host: t.url, token: await createToken(t.db, fay) });
    const added = await own.UserEmails.create('fay.second@example.com');
    assert.equal(added.email, 'fay.second@example.com');
    assert.equal(added.confirmed_at, null, 'a self-added email waits for confirmation');
    assert.equal((await own.UserEmails.show(added.id)).email, 'fay.second@example.com');

    const confirmed = await admin.UserEmails.create('fay.third@example.com', { userId: fay.id, skipConfirmation: true });
    assert.ok(confirmed.confirmed_at);
    const rows = await t.db.selectFrom('emails').selectAll().where('user_id', '=', fay.id).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => r.email), ['fay.second@example.com', 'fay.third@example.com']);

    const asFay = new Gitlab({ host: t.url, token: ROOT_TOKEN, sudo: fay.username });
    const seen = await asFay.UserEmails.all();
    assert.deepEqual(seen.map((e) => e.email).sort(), ['fay.second@example.com', 'fay.third@example.com'], 'the primary email is not listed');
    assert.deepEqual((await admin.UserEmails.all({ userId: fay.id })).map((e) => e.id).sort((a, b) => a - b), rows.map((r) => r.id));

    await rejectsWith(own.UserEmails.create('fay.second@example.com'), 400);
    await own.UserEmails.remove(added.id);
    await admin.UserEmails.remove(confirmed.id, { userId: fay.id });
    assert.deepEqual(await own.UserEmails.all(), []);
  });

  it('creates, shows, lists and revokes impersonation tokens', async () => {
    const gus = await createUser(t.db);
    const expiresAt = inDays(10);
    const created = await admin.UserImpersonationTokens.create(gus.id, 'support', ['api', 'read_user'], { expiresAt });
    assert.equal(created.name, 'support');
    assert.equal(created.impersonation, true);
    assert.equal(created.active, true);
    assert.equal(created.user_id, gus.id);
    assert.deepEqual(created.scopes, ['api', 'read_user']);
    assert.equal(created.expires_at, expiresAt);
    assert.ok(created.token);

    const impersonating = new Gitlab({ host: t.url, token: created.token! });
    assert.equal((await impersonating.Users.showCurrentUser()).id, gus.id);

    const shown = await admin.UserImpersonationTokens.show(gus.id, created.id);
    assert.equal(shown.id, created.id);
    assert.equal(shown.token, undefined, 'the secret is shown only at creation');
    const second = await admin.UserImpersonationTokens.create(gus.id, 'second', ['read_user']);
    const all = await admin.UserImpersonationTokens.all(gus.id, { perPage: 1 });
    assert.deepEqual(all.map((x) => x.id).sort((a, b) => a - b), [created.id, second.id]);

    await admin.UserImpersonationTokens.revoke(gus.id, created.id);
    const row = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.revoked, 1);
    await rejectsWith(impersonating.Users.showCurrentUser(), 401, 'invalid_token');
    assert.deepEqual((await admin.UserImpersonationTokens.all(gus.id, { state: 'inactive' })).map((x) => x.id), [created.id]);
    assert.deepEqual((await admin.UserImpersonationTokens.all(gus.id, { state: 'active' })).map((x) => x.id), [second.id]);
    await rejectsWith(admin.UserImpersonationTokens.show(gus.id, 999999), 404, '404 Impersonation Token Not Found');
  });

  it('creates personal access tokens for a user, then lists, shows and removes them', async () => {
    const hal = await createUser(t.db);
    const expiresAt = inDays(20);
    const created = await admin.Users.createPersonalAccessToken(hal.id, 'ci', ['read_user', 'api'], { expiresAt });
    assert.equal(created.name, 'ci');
    assert.equal(created.user_id, hal.id);
    assert.deepEqual(created.scopes, ['read_user', 'api']);
    assert.equal(created.expires_at, expiresAt);
    const token = created.token as string;
    assert.ok(token);

    const api = new Gitlab({ host: t.url, token });
    assert.equal((await api.Users.showCurrentUser()).id, hal.id);
    const other = await admin.Users.createPersonalAccessToken(hal.id, 'spare', ['read_user']);

    assert.deepEqual((await api.PersonalAccessTokens.all({ perPage: 1 })).map((x) => x.id).sort((a, b) => a - b), [created.id, other.id]);
    assert.deepEqual((await admin.PersonalAccessTokens.all({ userId: hal.id })).map((x) => x.id).sort((a, b) => a - b), [created.id, other.id]);
    assert.equal((await api.PersonalAccessTokens.show()).id, created.id, 'show() is personal_access_tokens/self');
    assert.equal((await api.PersonalAccessTokens.show({ tokenId: other.id })).name, 'spare');

    await api.PersonalAccessTokens.remove({ tokenId: other.id });
    const revoked = await t.db.selectFrom('personal_access_tokens').select('revoked').where('id', '=', other.id).executeTakeFirstOrThrow();
    assert.equal(revoked.revoked, 1);
    assert.deepEqual((await api.PersonalAccessTokens.all({ state: 'active' })).map((x) => x.id), [created.id]);

    await api.PersonalAccessTokens.remove();
    await rejectsWith(api.Users.showCurrentUser(), 401, 'invalid_token');
    const self = await t.db.selectFrom('personal_access_tokens').select('revoked').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(self.revoked, 1);
  });

  it('removes a user', async () => {
    const ivy = await admin.Users.create({ email: 'gb.ivy@example.com', username: 'gb_ivy', name: 'Ivy', forceRandomPassword: true });
    const removed = await admin.Users.remove(ivy.id, { showExpanded: true });
    assert.equal(removed.status, 204);
    assert.equal(removed.data, null);
    assert.equal(await userRow(ivy.id), undefined);
    await rejectsWith(admin.Users.show(ivy.id), 404, '404 User Not Found');
  });
});
