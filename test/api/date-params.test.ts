/**
 * Date parameters as the Service's Grape `Date` coercion (Ruby's Date.parse) reads them (issue 35,
 * item 2): a date-time's date part, slashes, the basic form and RFC 2822 dates are dates; garbage,
 * days that do not exist and strings past Date.parse's 128 characters stay `x is invalid`; an
 * empty value is no date. DateTime parameters take the same forms with their time and zone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('date parameters', () => {
  let t: TestApp;
  let user: UserRow;
  let project: { id: number };
  let group: { id: number };

  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'dated' } })).json();
    group = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'dated', path: 'dated' } })).json();
  });
  after(async () => { await t.close(); });

  const personal = (expires_at: unknown) => t.request({
    method: 'POST', url: `/api/v4/users/${user.id}/personal_access_tokens`, token: ROOT_TOKEN, payload: { name: 'pat', scopes: ['api'], expires_at },
  });

  it('takes a date-time as its date, on every token that expires', async () => {
    const pat = await personal('2026-12-26T00:00:00Z');
    assert.equal(pat.statusCode, 201, pat.body);
    assert.equal(pat.json().expires_at, '2026-12-26');
    const row = await t.db.selectFrom('personal_access_tokens').select('expires_at').where('id', '=', pat.json().id).executeTakeFirstOrThrow();
    assert.equal(row.expires_at, '2026-12-26');
    // Date.parse keeps the date as written, whatever the zone (23:30 at UTC-5 is the 27th in UTC).
    const impersonation = await t.request({
      method: 'POST', url: `/api/v4/users/${user.id}/impersonation_tokens`, token: ROOT_TOKEN,
      payload: { name: 'imp', scopes: ['api'], expires_at: '2026-12-26T23:30:00-05:00' },
    });
    assert.equal(impersonation.statusCode, 201, impersonation.body);
    assert.equal(impersonation.json().expires_at, '2026-12-26');
    for (const [base, expiresAt] of [[`/projects/${project.id}`, '2026-12-26T00:00:00.000+09:00'], [`/groups/${group.id}`, '2026/12/26']]) {
      const r = await t.request({
        method: 'POST', url: `/api/v4${base}/access_tokens`, token: ROOT_TOKEN, payload: { name: 'bot', scopes: ['read_api'], expires_at: expiresAt },
      });
      assert.equal(r.statusCode, 201, r.body);
      assert.equal(r.json().expires_at, '2026-12-26', base);
    }
  });

  it('reads the forms clients send, from a form body too', async () => {
    const forms = [
      '2026-12-26', '2026-1-2', '2026/12/26', '2026.12.26', '20261226', '20261226T101500Z', '2026-12-26 10:00:00 UTC',
      '2026-12-26T10:00:00+0100', 'Sat, 26 Dec 2026 00:00:00 GMT', 'Sat, 26 Dec 2026 00:00:00 +0000', '26 Dec 2026', 'Dec 26 2026',
      'December 26, 2026', 'Sat Dec 26 2026 10:00:00 GMT+0200 (Central European Summer Time)', '  2026-12-26  ',
    ];
    for (const form of forms) {
      const r = await personal(form);
      assert.equal(r.statusCode, 201, `${form}: ${r.body}`);
      assert.equal(r.json().expires_at, form === '2026-1-2' ? '2026-01-02' : '2026-12-26', form);
    }
    const encoded = await t.request({
      method: 'POST', url: `/api/v4/users/${user.id}/personal_access_tokens`, token: ROOT_TOKEN,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `name=form&scopes[]=api&expires_at=${encodeURIComponent('2026-12-26T00:00:00Z')}`,
    });
    assert.equal(encoded.statusCode, 201, encoded.body);
    assert.equal(encoded.json().expires_at, '2026-12-26');
  });

  it('refuses garbage, days that do not exist and what Date.parse refuses, writing nothing', async () => {
    const before = await t.db.selectFrom('personal_access_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    // Ruby guesses `26` as the 26th of this month and `1226` as December 26th of this year: a
    // date that depends on the day it is sent is refused here.
    for (const bad of ['garbage', '2026-02-30', '2026-13-01', '2026-12-26 garbage', '12/26/2026', '26', '1226', '2026-12', `2026-12-26 ${'x'.repeat(120)}`, 20261226, true]) {
      const r = await personal(bad);
      assert.deepEqual([r.statusCode, r.json()], [400, { error: 'expires_at is invalid' }], String(bad));
    }
    const after = await t.db.selectFrom('personal_access_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  it('takes an empty value as no date', async () => {
    const r = await personal('');
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(r.json().expires_at, null);
    const member = await createUser(t.db);
    const added = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ROOT_TOKEN,
      payload: { user_id: member.id, access_level: 30, expires_at: 'Sat, 26 Dec 2026 00:00:00 GMT' },
    });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(added.json().expires_at, '2026-12-26');
    const cleared = await t.request({
      method: 'PUT', url: `/api/v4/projects/${project.id}/members/${member.id}`, token: ROOT_TOKEN, payload: { access_level: 30, expires_at: '' },
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().expires_at, null);
  });

  it('reads DateTime parameters in the same forms, with their time and zone', async () => {
    const token = await createToken(t.db, user);
    for (const [value, ok] of [['2026-12-26 10:00:00 UTC', true], ['Sat, 26 Dec 2026 10:00:00 +0200', true], ['20261226T100000Z', true], ['2026-12-26T25:00:00Z', false], ['yesterday', false]] as const) {
      const r = await t.request({ url: `/api/v4/projects?last_activity_after=${encodeURIComponent(value)}`, token });
      if (ok) assert.equal(r.statusCode, 200, `${value}: ${r.body}`);
      else assert.deepEqual([r.statusCode, r.json()], [400, { error: 'last_activity_after is invalid' }], value);
    }
  });
});
