/**
 * Deploy keys (issue 31, item 2; the Service's lib/api/deploy_keys.rb): a project's keys for its
 * Maintainers, an existing key enabled rather than created again, can_push and title updates,
 * removal (a private key no project uses goes with it), the administrators' instance-wide list and
 * public keys, the Key model's validations (a deploy key cannot duplicate a user's key), and
 * deploy_keys_projects in GET /keys?fingerprint=. python-gitlab's test_deploy_keys flow included.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

/** A fresh ed25519 public key in OpenSSH's one-line form. */
function newPublicKey(comment = 'someone@example.com'): string {
  const der = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  const raw = der.subarray(der.length - 32);
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  const blob = Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

describe('deploy keys', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let devToken: string;
  const projects: Record<string, { id: number }> = {};
  const key1 = newPublicKey('deployer@example.com');
  let key1Id: number;

  const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: Record<string, unknown>) => t.request({
    method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}),
  });

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db, { username: 'alice', name: 'Alice Doe' });
    aliceToken = await createToken(t.db, alice);
    for (const name of ['a', 'b', 'c']) {
      const res = await req('POST', '/projects', aliceToken, { name });
      assert.equal(res.statusCode, 201, res.body);
      projects[name] = res.json();
    }
    const dev = await createUser(t.db, { username: 'dev' });
    devToken = await createToken(t.db, dev);
    const m = await req('POST', `/projects/${projects.a.id}/members`, aliceToken, { user_id: dev.id, access_level: 30 });
    assert.equal(m.statusCode, 201, m.body);
  });
  after(async () => t.close());

  it('adds a key to a project and shows it', async () => {
    const res = await req('POST', `/projects/${projects.a.id}/deploy_keys`, aliceToken, { title: 'deployer', key: `  ${key1}\n` });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    key1Id = body.id;
    assert.deepEqual(Object.keys(body).sort(), [
      'can_push', 'created_at', 'expires_at', 'fingerprint', 'fingerprint_sha256', 'id', 'key', 'title', 'usage_type',
    ]);
    assert.equal(body.title, 'deployer');
    assert.equal(body.can_push, false);
    assert.equal(body.expires_at, null);
    // The comment is replaced by the creator and the instance (Key#publishable_key).
    assert.equal(body.key, `${key1.split(' ').slice(0, 2).join(' ')} Alice Doe (kiln.test)`);
    assert.match(body.fingerprint, /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    assert.match(body.fingerprint_sha256, /^SHA256:/);

    const list = await req('GET', `/projects/${projects.a.id}/deploy_keys`, aliceToken);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), [body]);
    const one = await req('GET', `/projects/${projects.a.id}/deploy_keys/${key1Id}`, aliceToken);
    assert.deepEqual(one.json(), body);
    const missing = await req('GET', `/projects/${projects.a.id}/deploy_keys/999999`, aliceToken);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Not found' });
    // Not one of the user's own keys.
    assert.deepEqual((await req('GET', '/user/keys', aliceToken)).json(), []);
  });

  it('answers the same key again, and enables it on another project the user maintains', async () => {
    const again = await req('POST', `/projects/${projects.a.id}/deploy_keys`, aliceToken, { title: 'other title', key: key1 });
    assert.equal(again.statusCode, 201);
    assert.equal(again.json().id, key1Id);
    assert.equal(again.json().title, 'deployer');
    const onB = await req('POST', `/projects/${projects.b.id}/deploy_keys`, aliceToken, { title: 'x', key: key1, can_push: true });
    assert.equal(onB.statusCode, 201, onB.body);
    assert.equal(onB.json().id, key1Id);
    assert.equal(onB.json().can_push, true);
    const enabled = await req('POST', `/projects/${projects.c.id}/deploy_keys/${key1Id}/enable`, aliceToken);
    assert.equal(enabled.statusCode, 201, enabled.body);
    assert.equal(enabled.json().id, key1Id);
    assert.equal(enabled.json().can_push, undefined);
    assert.equal((await req('GET', `/projects/${projects.c.id}/deploy_keys`, aliceToken)).json()[0].can_push, false);
    const unknown = await req('POST', `/projects/${projects.c.id}/deploy_keys/999999/enable`, aliceToken);
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), { message: '404 Deploy key Not Found' });
  });

  it("does not let another user enable a key of projects they do not maintain", async () => {
    const bob = await createUser(t.db, { username: 'bob' });
    const bobToken = await createToken(t.db, bob);
    const own = await req('POST', '/projects', bobToken, { name: 'bobs' });
    const res = await req('POST', `/projects/${own.json().id}/deploy_keys/${key1Id}/enable`, bobToken);
    assert.equal(res.statusCode, 404);
    // Adding the same key text is a new key, refused as a duplicate.
    const add = await req('POST', `/projects/${own.json().id}/deploy_keys`, bobToken, { title: 'mine', key: key1 });
    assert.equal(add.statusCode, 400);
    assert.deepEqual(add.json(), { message: { 'deploy_key.fingerprint': ['has already been taken'] } });
  });

  it('updates can_push and the title', async () => {
    const res = await req('PUT', `/projects/${projects.a.id}/deploy_keys/${key1Id}`, aliceToken, { title: 'renamed', can_push: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().title, 'renamed');
    assert.equal(res.json().can_push, true);
    // can_push is per project.
    assert.equal((await req('GET', `/projects/${projects.c.id}/deploy_keys/${key1Id}`, aliceToken)).json().can_push, false);
    const none = await req('PUT', `/projects/${projects.a.id}/deploy_keys/${key1Id}`, aliceToken, {});
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { error: 'title, can_push are missing, at least one parameter must be provided' });
    const missing = await req('PUT', `/projects/${projects.a.id}/deploy_keys/999999`, aliceToken, { can_push: true });
    assert.equal(missing.statusCode, 404);
  });

  it('validates the key as the Key model does', async () => {
    const url = `/projects/${projects.a.id}/deploy_keys`;
    const bad = await req('POST', url, aliceToken, { title: 't', key: 'ssh-rsa notakey' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { message: { 'deploy_key.key': ['is invalid'], 'deploy_key.fingerprint': ['cannot be generated'] } });
    const missing = await req('POST', url, aliceToken, { title: 't' });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: '400 Bad request - "key" not given' });
    // A user's key cannot be a deploy key too (one fingerprint across every key).
    const userKey = newPublicKey();
    assert.equal((await req('POST', '/user/keys', aliceToken, { title: 'laptop', key: userKey })).statusCode, 201);
    const dup = await req('POST', url, aliceToken, { title: 't', key: userKey });
    assert.equal(dup.statusCode, 400);
    assert.deepEqual(dup.json(), { message: { 'deploy_key.fingerprint': ['has already been taken'] } });
    const blank = await req('POST', url, aliceToken, { title: '  ', key: newPublicKey() });
    assert.deepEqual(blank.json(), { message: { 'deploy_key.title': ["can't be blank"] } });
  });

  it('takes a Maintainer: a Developer is forbidden, a stranger sees no project', async () => {
    const dev = await req('GET', `/projects/${projects.a.id}/deploy_keys`, devToken);
    assert.equal(dev.statusCode, 403);
    const carol = await createToken(t.db, await createUser(t.db, { username: 'carol' }));
    const stranger = await req('GET', `/projects/${projects.a.id}/deploy_keys`, carol);
    assert.equal(stranger.statusCode, 404);
    assert.deepEqual(stranger.json(), { message: '404 Project Not Found' });
  });

  it("lists the instance's keys for administrators, with public ones on their own (python-gitlab's flow)", async () => {
    assert.equal((await req('GET', '/deploy_keys', aliceToken)).statusCode, 403);
    assert.equal((await req('POST', '/deploy_keys', aliceToken, { title: 'x', key: newPublicKey() })).statusCode, 403);
    const created = await req('POST', '/deploy_keys', ROOT_TOKEN, { title: 'foo@bar', key: newPublicKey() });
    assert.equal(created.statusCode, 201, created.body);
    const all = (await req('GET', '/deploy_keys', ROOT_TOKEN)).json() as { id: number; projects_with_write_access: { id: number }[] }[];
    assert.deepEqual(all.map((k) => k.id), [key1Id, created.json().id]);
    assert.deepEqual(all[0].projects_with_write_access.map((p) => p.id).sort(), [projects.a.id, projects.b.id].sort());
    const publicOnly = (await req('GET', '/deploy_keys?public=true', ROOT_TOKEN)).json() as { id: number }[];
    assert.deepEqual(publicOnly.map((k) => k.id), [created.json().id]);
    // Any maintainer may enable a public key.
    const bobs = await createUser(t.db, { username: 'bobs2' });
    const bobsToken = await createToken(t.db, bobs);
    const own = await req('POST', '/projects', bobsToken, { name: 'p' });
    const enabled = await req('POST', `/projects/${own.json().id}/deploy_keys/${created.json().id}/enable`, bobsToken);
    assert.equal(enabled.statusCode, 201, enabled.body);
  });

  it("lists the deploy keys of projects both the caller and a user maintain (/users/:user_id/project_deploy_keys)", async () => {
    const own = await req('GET', '/users/alice/project_deploy_keys', aliceToken);
    assert.equal(own.statusCode, 200, own.body);
    assert.deepEqual(own.json().map((k: { id: number }) => k.id), [key1Id]);
    assert.deepEqual(Object.keys(own.json()[0]).sort(), [
      'created_at', 'expires_at', 'fingerprint', 'fingerprint_sha256', 'id', 'key', 'title', 'usage_type',
    ]);
    // The Developer of project a shares no maintained project with alice.
    const dev = await req('GET', `/users/${alice.id}/project_deploy_keys`, devToken);
    assert.equal(dev.statusCode, 403);
    assert.deepEqual(dev.json(), { message: '403 Forbidden - No common authorized project found' });
    assert.equal((await req('GET', '/users/nobody-here/project_deploy_keys', aliceToken)).statusCode, 404);
  });

  it('finds a deploy key by fingerprint with the projects it is enabled on', async () => {
    const fp = (await req('GET', `/projects/${projects.a.id}/deploy_keys/${key1Id}`, aliceToken)).json().fingerprint_sha256;
    const res = await req('GET', `/keys?fingerprint=${encodeURIComponent(fp)}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user.id, alice.id);
    const links = res.json().deploy_keys_projects as { project_id: number; can_push: boolean; deploy_key_id: number }[];
    assert.deepEqual(links.map((l) => [l.project_id, l.can_push]), [[projects.a.id, true], [projects.b.id, true], [projects.c.id, false]]);
    assert.ok(links.every((l) => l.deploy_key_id === key1Id));
    // By id it is an SSHKeyWithUser alone.
    const byId = await req('GET', `/keys/${key1Id}`, ROOT_TOKEN);
    assert.equal(byId.statusCode, 200);
    assert.equal(byId.json().deploy_keys_projects, undefined);
  });

  it('removes a key from a project, and a private key with its last project', async () => {
    for (const p of ['a', 'b']) {
      const res = await req('DELETE', `/projects/${projects[p].id}/deploy_keys/${key1Id}`, aliceToken);
      assert.equal(res.statusCode, 204);
    }
    assert.ok(await t.db.selectFrom('keys').select('id').where('id', '=', key1Id).executeTakeFirst());
    const again = await req('DELETE', `/projects/${projects.a.id}/deploy_keys/${key1Id}`, aliceToken);
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { message: '404 Deploy key Not Found' });
    assert.equal((await req('DELETE', `/projects/${projects.c.id}/deploy_keys/${key1Id}`, aliceToken)).statusCode, 204);
    assert.equal(await t.db.selectFrom('keys').select('id').where('id', '=', key1Id).executeTakeFirst(), undefined);
  });

  it("keeps a deploy key working when its creator is deleted, hard or not (the ghost user's then)", async () => {
    for (const hard of [false, true]) {
      const maker = await createUser(t.db, { username: `maker${hard ? 'hard' : 'soft'}`, name: 'Maker' });
      const makerToken = await createToken(t.db, maker);
      const m = await req('POST', `/projects/${projects.c.id}/members`, aliceToken, { user_id: maker.id, access_level: 40 });
      assert.equal(m.statusCode, 201, m.body);
      const added = await req('POST', `/projects/${projects.c.id}/deploy_keys`, makerToken, { title: 'made', key: newPublicKey() });
      assert.equal(added.statusCode, 201, added.body);
      const del = await req('DELETE', `/users/${maker.id}${hard ? '?hard_delete=true' : ''}`, ROOT_TOKEN);
      assert.equal(del.statusCode, 204, del.body);
      const shown = await req('GET', `/projects/${projects.c.id}/deploy_keys/${added.json().id}`, aliceToken);
      assert.equal(shown.statusCode, 200, shown.body);
      assert.match(shown.json().key, / Ghost User \(kiln\.test\)$/);
    }
  });
});

