import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { verifyPassword } from '../../src/domain/users/password.ts';
import { setSetting } from '../../src/domain/settings/settings.ts';
import { nowIso } from '../../src/domain/clock.ts';

/** A multipart body with text fields and one file. */
function multipart(fields: Record<string, string>, file: { field: string; filename: string; data: Buffer; type: string }) {
  const boundary = '----kilntest';
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`));
  parts.push(file.data, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('POST /users and PUT /users/:id', () => {
  let t: TestApp;
  let userToken: string;
  before(async () => {
    t = await startTestApp();
    const user = await createUser(t.db);
    userToken = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const post = (payload: Record<string, unknown>, token = ROOT_TOKEN) => t.request({ method: 'POST', url: '/api/v4/users', token, payload });

  it('creates a user with every attribute and a personal namespace', async () => {
    const res = await post({
      email: 'carol@example.com', name: 'Carol', username: 'carol', password: 'secret-password', skip_confirmation: true,
      bio: 'Hi', location: 'Here', skype: 'c.s', linkedin: 'carol-l', twitter: 'carol_t', website_url: 'https://carol.example',
      organization: 'Org', job_title: 'Engineer', pronouns: 'she/her', public_email: 'carol@example.com', note: 'vip',
      projects_limit: 5, can_create_group: false, theme_id: 2, color_scheme_id: 3, private_profile: true, admin: true,
      extern_uid: 'carol-uid', provider: 'ldapmain', view_diffs_file_by_file: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.username, 'carol');
    assert.equal(body.is_admin, true);
    assert.equal(body.projects_limit, 5);
    assert.equal(body.can_create_group, false);
    assert.equal(body.theme_id, 2);
    assert.equal(body.work_information, 'Engineer at Org');
    assert.equal(body.private_profile, true);
    assert.equal(body.public_email, 'carol@example.com');
    assert.ok(body.confirmed_at);
    assert.deepEqual(body.identities, [{ provider: 'ldapmain', extern_uid: 'carol-uid' }]);
    assert.equal(typeof body.namespace_id, 'number');
    const row = await t.db.selectFrom('users').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.ok(await verifyPassword('secret-password', row.encrypted_password));
    assert.equal(row.created_by_id, 1);
    const ns = await t.db.selectFrom('namespaces').selectAll().where('id', '=', body.namespace_id).executeTakeFirstOrThrow();
    assert.equal(ns.path, 'carol');
    const prefs = await t.db.selectFrom('user_preferences').selectAll().where('user_id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(prefs.view_diffs_file_by_file, 1);
  });

  it('requires one of password, reset_password, force_random_password', async () => {
    const res = await post({ email: 'x@example.com', name: 'X', username: 'xx' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'password, reset_password, force_random_password are missing, at least one parameter must be provided' });
    const missing = await post({ name: 'X', username: 'xx', password: 'long-enough' });
    assert.deepEqual(missing.json(), { message: '400 Bad request - "email" not given' });
    const blank = await post({ email: 'x@example.com', name: 'X', username: 'xx', reset_password: false });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: { password: ["can't be blank"] } });
  });

  it('sets a random password with force_random_password, ignoring password', async () => {
    const res = await post({ email: 'rnd@example.com', name: 'R', username: 'rnd', force_random_password: true, password: 'x' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().confirmed_at, null);
    const row = await t.db.selectFrom('users').select('encrypted_password').where('id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.ok(row.encrypted_password?.startsWith('scrypt$'));
    assert.equal(await verifyPassword('x', row.encrypted_password), false);
  });

  it('answers 409 for a taken email (any case, secondary emails too) or username', async () => {
    const email = await post({ email: 'CAROL@example.com', name: 'C2', username: 'carol2', password: 'long-enough' });
    assert.equal(email.statusCode, 409);
    assert.deepEqual(email.json(), { message: 'Email has already been taken' });
    const owner = await createUser(t.db);
    await t.db.insertInto('emails').values({ user_id: owner.id, email: 'second@example.com', confirmed_at: null, created_at: nowIso(), updated_at: nowIso() }).execute();
    const secondary = await post({ email: 'Second@Example.com', name: 'S', username: 'secondy', password: 'long-enough' });
    assert.equal(secondary.statusCode, 409);
    const username = await post({ email: 'c3@example.com', name: 'C3', username: 'CAROL', password: 'long-enough' });
    assert.equal(username.statusCode, 409);
    assert.deepEqual(username.json(), { message: 'Username has already been taken' });
  });

  it('answers 400 with the model errors', async () => {
    const res = await post({ email: 'not-an-email', name: 'Bad', username: '-bad', password: 'short', projects_limit: -1, theme_id: 99, bio: 'b'.repeat(256) });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      message: {
        email: ['is invalid'],
        password: ['is too short (minimum is 8 characters)'],
        projects_limit: ['must be greater than or equal to 0'],
        username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."],
        theme_id: ['99 is not a valid theme'],
        bio: ['is too long (maximum is 255 characters)'],
      },
    });
    const reserved = await post({ email: 'r@example.com', name: 'R', username: 'admin', password: 'long-enough' });
    assert.deepEqual(reserved.json(), { message: { username: ['admin is a reserved name'] } });
    const notOwned = await post({ email: 'own@example.com', name: 'O', username: 'owner1', password: 'long-enough', public_email: 'other@example.com' });
    assert.deepEqual(notOwned.json(), { message: { public_email: ['is not an email you own'] } });
    const half = await post({ email: 'h@example.com', name: 'H', username: 'half', password: 'long-enough', provider: 'ldapmain' });
    assert.deepEqual(half.json(), { error: 'extern_uid, provider provide all or none of parameters' });
  });

  it('validates before refusing non-administrators, and refuses them', async () => {
    const invalid = await post({ name: 'X' }, userToken);
    assert.equal(invalid.statusCode, 400);
    const res = await post({ email: 'y@example.com', name: 'Y', username: 'yy', password: 'long-enough' }, userToken);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
    const anonymous = await t.request({ method: 'POST', url: '/api/v4/users', payload: { email: 'y@example.com' } });
    assert.equal(anonymous.statusCode, 401);
  });

  it('makes external users unable to create groups or projects', async () => {
    const res = await post({ email: 'ext@example.com', name: 'E', username: 'ext', password: 'long-enough', external: true });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().external, true);
    assert.equal(res.json().can_create_project, false);
    assert.equal(res.json().can_create_group, false);
  });

  it('creates pending users when the instance requires approval', async () => {
    await setSetting(t.db, 'require_admin_approval_after_user_signup', true);
    const res = await post({ email: 'pend@example.com', name: 'P', username: 'pend', password: 'long-enough' });
    await setSetting(t.db, 'require_admin_approval_after_user_signup', false);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().state, 'blocked_pending_approval');
  });

  it('stores an uploaded avatar and serves it back at avatar_url', async () => {
    const body = multipart({ email: 'ava@example.com', name: 'Ava', username: 'ava', password: 'long-enough' }, { field: 'avatar', filename: 'me pic.png', data: PNG, type: 'image/png' });
    const res = await t.request({ method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN, ...body });
    assert.equal(res.statusCode, 201, res.body);
    const url = res.json().avatar_url as string;
    assert.equal(url, `http://kiln.test/uploads/-/system/user/avatar/${res.json().id}/me_pic.png`);
    const image = await t.request({ url: url.replace('http://kiln.test', '') });
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/png');
    assert.deepEqual(image.rawPayload, PNG);
    const bad = multipart({ email: 'ava2@example.com', name: 'Ava', username: 'ava2', password: 'long-enough' }, { field: 'avatar', filename: 'x.exe', data: PNG, type: 'application/octet-stream' });
    const refused = await t.request({ method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN, ...bad });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().message.avatar[0], /^file format is not supported/);
  });

  it('updates a user; 404, 409 and 400 as the Service answers them', async () => {
    const dave = await createUser(t.db, { username: 'dave', email: 'dave@example.com' });
    const res = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: ROOT_TOKEN, payload: { name: 'David', username: 'david', bio: 'new bio', external: true } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().username, 'david');
    assert.equal(res.json().projects_limit, 0);
    const ns = await t.db.selectFrom('namespaces').select(['path', 'name']).where('owner_id', '=', dave.id).executeTakeFirstOrThrow();
    assert.deepEqual(ns, { path: 'david', name: 'David' });
    assert.equal((await t.request({ method: 'PUT', url: '/api/v4/users/999999', token: ROOT_TOKEN, payload: { name: 'x' } })).json().message, '404 User Not Found');
    assert.deepEqual((await t.request({ method: 'PUT', url: '/api/v4/users/abc', token: ROOT_TOKEN, payload: {} })).json(), { error: '404 Not Found' });
    const taken = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: ROOT_TOKEN, payload: { email: 'Carol@example.com' } });
    assert.equal(taken.statusCode, 409);
    assert.deepEqual(taken.json(), { message: 'Email has already been taken' });
    const same = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: ROOT_TOKEN, payload: { email: 'DAVE@example.com', skip_reconfirmation: true } });
    assert.equal(same.statusCode, 200);
    const user = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: ROOT_TOKEN, payload: { username: 'carol' } });
    assert.deepEqual(user.json(), { message: 'Username has already been taken' });
    const invalid = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: ROOT_TOKEN, payload: { password: 'short', projects_limit: -5 } });
    assert.deepEqual(invalid.json(), { message: { password: ['is too short (minimum is 8 characters)'], projects_limit: ['must be greater than or equal to 0'] } });
    const forbidden = await t.request({ method: 'PUT', url: `/api/v4/users/${dave.id}`, token: userToken, payload: { name: 'x' } });
    assert.equal(forbidden.statusCode, 403);
  });

  it('expires a password an administrator sets for someone else', async () => {
    const erin = await createUser(t.db, { username: 'erin' });
    const token = await createToken(t.db, erin);
    assert.equal((await t.request({ url: '/api/v4/user', token })).statusCode, 200);
    const res = await t.request({ method: 'PUT', url: `/api/v4/users/${erin.id}`, token: ROOT_TOKEN, payload: { password: 'brand-new-password' } });
    assert.equal(res.statusCode, 200);
    const row = await t.db.selectFrom('users').selectAll().where('id', '=', erin.id).executeTakeFirstOrThrow();
    assert.ok(row.password_expires_at && row.password_expires_at <= nowIso());
    assert.ok(await verifyPassword('brand-new-password', row.encrypted_password));
    const refused = await t.request({ url: '/api/v4/user', token });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.json().message, /^403 Forbidden - Your password expired/);
  });

  it('accepts a verified email as public_email and sets identities', async () => {
    const fay = await createUser(t.db, { username: 'fay', email: 'fay@example.com' });
    await t.db.insertInto('emails').values({ user_id: fay.id, email: 'fay2@example.com', confirmed_at: nowIso(), created_at: nowIso(), updated_at: nowIso() }).execute();
    await t.db.insertInto('emails').values({ user_id: fay.id, email: 'fay3@example.com', confirmed_at: null, created_at: nowIso(), updated_at: nowIso() }).execute();
    const ok = await t.request({ method: 'PUT', url: `/api/v4/users/${fay.id}`, token: ROOT_TOKEN, payload: { public_email: 'fay2@example.com', provider: 'github', extern_uid: '42' } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().public_email, 'fay2@example.com');
    assert.deepEqual(ok.json().identities, [{ provider: 'github', extern_uid: '42' }]);
    const unverified = await t.request({ method: 'PUT', url: `/api/v4/users/${fay.id}`, token: ROOT_TOKEN, payload: { public_email: 'fay3@example.com' } });
    assert.deepEqual(unverified.json(), { message: { public_email: ['is not an email you own'] } });
  });

  it('deletes an identity', async () => {
    const gus = await createUser(t.db);
    await t.db.insertInto('identities').values({ user_id: gus.id, provider: 'github', extern_uid: 'g', saml_provider_id: null, created_at: nowIso() }).execute();
    const url = `/api/v4/users/${gus.id}/identities/github`;
    assert.equal((await t.request({ method: 'DELETE', url, token: userToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url, token: ROOT_TOKEN })).statusCode, 204);
    const again = await t.request({ method: 'DELETE', url, token: ROOT_TOKEN });
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { message: '404 Identity Not Found' });
    assert.deepEqual((await t.request({ method: 'DELETE', url: '/api/v4/users/999999/identities/github', token: ROOT_TOKEN })).json(), { message: '404 User Not Found' });
  });
});
