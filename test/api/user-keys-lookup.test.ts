import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { sshFingerprints, sshPublicKey } from '../helpers/keys.ts';

describe('SSH keys by id and fingerprint (/keys)', () => {
  let t: TestApp;
  let owner: UserRow;
  let userToken: string;
  let line: string;
  let keyId: number;
  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { name: 'Key Owner' });
    userToken = await createToken(t.db, owner);
    line = sshPublicKey('rsa');
    const res = await t.request({ method: 'POST', url: `/api/v4/users/${owner.id}/keys`, token: ROOT_TOKEN, payload: { title: 'found', key: line } });
    keyId = res.json().id;
  });
  after(async () => { await t.close(); });

  function assertKeyWithUser(body: Record<string, any>) {
    assert.equal(body.id, keyId);
    assert.equal(body.title, 'found');
    assert.match(body.key, / Key Owner \(kiln\.test\)$/);
    assert.equal(body.user.id, owner.id);
    assert.equal(body.user.username, owner.username);
    // UserPublic: includes the email and identities.
    assert.equal(body.user.email, owner.email);
    assert.deepEqual(body.user.identities, []);
  }

  it('finds a key by id with its owner', async () => {
    const res = await t.request({ url: `/api/v4/keys/${keyId}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    assertKeyWithUser(res.json());
  });

  it('finds a key by SHA256 and by MD5 fingerprint', async () => {
    const fp = sshFingerprints(line);
    for (const fingerprint of [fp.sha256, fp.sha256.replace('SHA256:', 'sha256:'), fp.md5, fp.md5.toUpperCase()]) {
      const res = await t.request({ url: `/api/v4/keys?fingerprint=${encodeURIComponent(fingerprint)}`, token: ROOT_TOKEN });
      assert.equal(res.statusCode, 200, fingerprint);
      assertKeyWithUser(res.json());
    }
  });

  it('answers 404 for unknown keys and 400 for malformed fingerprints', async () => {
    const unknown = sshFingerprints(sshPublicKey());
    for (const fingerprint of [unknown.sha256, unknown.md5]) {
      const res = await t.request({ url: `/api/v4/keys?fingerprint=${encodeURIComponent(fingerprint)}`, token: ROOT_TOKEN });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Key Not Found' }]);
    }
    for (const fingerprint of ['SHA256:abc', 'aa:bb', 'zz:'.repeat(15) + 'zz']) {
      const res = await t.request({ url: `/api/v4/keys?fingerprint=${encodeURIComponent(fingerprint)}`, token: ROOT_TOKEN });
      assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Failed to return the key' }], fingerprint);
    }
    const missing = await t.request({ url: '/api/v4/keys', token: ROOT_TOKEN });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "fingerprint" not given' }]);
    for (const id of ['999999', 'abc']) {
      const res = await t.request({ url: `/api/v4/keys/${id}`, token: ROOT_TOKEN });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    }
  });

  it('is for administrators only', async () => {
    for (const url of [`/api/v4/keys/${keyId}`, `/api/v4/keys?fingerprint=${encodeURIComponent(sshFingerprints(line).md5)}`]) {
      assert.equal((await t.request({ url })).statusCode, 401);
      const res = await t.request({ url, token: userToken });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    }
  });
});
