/**
 * Response serialisers are compiled on a route's first answer (src/http/entities/serializers.ts),
 * not at boot: this compiles every one the app has declared, so a schema fast-json-stringify
 * refuses fails here instead of in a first request's 500.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { compileAllSerializers } from '../../src/http/entities/serializers.ts';

describe('response schemas', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('serialises by the schema after compiling on first use', async () => {
    const res = await t.request({ url: '/api/v4/users/1', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.id, 1);
    assert.equal(body.username, 'root');
    assert.equal(body.is_admin, true);
    assert.equal('encrypted_password' in body, false);
  });

  it('compiles every route\'s response serialisers', () => {
    // Each route's response schemas and each viewer-dependent entity variant: well over 200.
    const compiled = compileAllSerializers();
    assert.ok(compiled > 200, `compiled ${compiled}`);
    assert.equal(compileAllSerializers(), 0, 'nothing is left to compile');
  });
});
