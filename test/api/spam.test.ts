import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';
import { USER_TYPES } from '../../src/domain/users/user-kind.ts';

const PATTERNS = 'buy cheap \\w+,casino';

describe('spam check without a CAPTCHA service', () => {
  let t: TestApp;
  let user: UserRow;
  let token: string;

  before(async () => {
    t = await startTestApp({ KILN_SPAM_PATTERNS: PATTERNS });
    user = await createUser(t.db);
    token = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  it('discards a spam status message with 400 and records a spam log', async () => {
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/status', token, payload: { message: 'Buy cheap watches', emoji: 'coffee' }, headers: { 'user-agent': 'spec-agent' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { error: 'Your user status has been recognized as spam and has been discarded.' } });
    assert.equal(await t.db.selectFrom('user_statuses').select('user_id').where('user_id', '=', user.id).executeTakeFirst(), undefined);
    const logs = await t.db.selectFrom('spam_logs').selectAll().where('user_id', '=', user.id).execute();
    assert.equal(logs.length, 1);
    assert.equal(logs[0].description, 'Buy cheap watches');
    assert.equal(logs[0].noteable_type, 'UserStatus');
    assert.equal(logs[0].user_agent, 'spec-agent');
    assert.equal(logs[0].via_api, 1);
    assert.equal(logs[0].recaptcha_verified, 0);
  });

  it('applies to PATCH too, and lets clean text through', async () => {
    const spam = await t.request({ method: 'PATCH', url: '/api/v4/user/status', token, payload: { message: 'online CASINO' } });
    assert.equal(spam.statusCode, 400);
    const clean = await t.request({ method: 'PATCH', url: '/api/v4/user/status', token, payload: { message: 'writing code' } });
    assert.equal(clean.statusCode, 200);
    assert.equal(clean.json().message, 'writing code');
  });

  it('ignores CAPTCHA headers when no CAPTCHA service is configured', async () => {
    const [log] = await t.db.selectFrom('spam_logs').select('id').where('user_id', '=', user.id).execute();
    const res = await t.request({
      method: 'PUT', url: '/api/v4/user/status', token, payload: { message: 'casino' },
      headers: { 'x-service-captcha-response': 'anything', 'x-service-spam-log-id': String(log.id) },
    });
    assert.equal(res.statusCode, 400);
  });

  it('does not check service users (the Service allowlists them)', async () => {
    const bot = await createUser(t.db, { user_type: USER_TYPES.service_user });
    const res = await t.request({ method: 'PUT', url: '/api/v4/user/status', token: await createToken(t.db, bot), payload: { message: 'casino night' } });
    assert.equal(res.statusCode, 200);
  });
});

describe('spam check with a CAPTCHA service', () => {
  let t: TestApp;
  let verifier: http.Server;
  const verifications: Record<string, string>[] = [];
  let user: UserRow;
  let token: string;

  before(async () => {
    // A reCAPTCHA v2 compatible verifier on the loopback interface: `good-*` responses pass.
    verifier = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const form = Object.fromEntries(new URLSearchParams(body));
        verifications.push(form);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ success: form.secret === 'test-secret' && form.response.startsWith('good-') }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const { port } = verifier.address() as AddressInfo;
    t = await startTestApp({
      KILN_SPAM_PATTERNS: PATTERNS,
      KILN_RECAPTCHA_SITE_KEY: 'test-site-key',
      KILN_RECAPTCHA_SECRET: 'test-secret',
      KILN_RECAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/recaptcha/api/siteverify`,
    });
    user = await createUser(t.db);
    token = await createToken(t.db, user);
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => verifier.close(resolve));
  });

  const putStatus = (headers: Record<string, string> = {}, as = token) =>
    t.request({ method: 'PUT', url: '/api/v4/user/status', token: as, payload: { message: 'buy cheap pills' }, headers });

  it('answers 409 asking for a CAPTCHA, with a spam log', async () => {
    const res = await putStatus();
    assert.equal(res.statusCode, 409);
    const body = res.json();
    const log = await t.db.selectFrom('spam_logs').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.deepEqual(body, {
      needs_captcha_response: true,
      spam_log_id: log.id,
      captcha_site_key: 'test-site-key',
      message: { error: 'Your user status has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.' },
    });
    assert.equal(verifications.length, 0);
  });

  it('asks again when the CAPTCHA response does not verify', async () => {
    const [log] = await t.db.selectFrom('spam_logs').select('id').where('user_id', '=', user.id).execute();
    const res = await putStatus({ 'x-service-captcha-response': 'bad-answer', 'x-service-spam-log-id': String(log.id) });
    assert.equal(res.statusCode, 409);
    assert.notEqual(res.json().spam_log_id, log.id);
    assert.equal(verifications.at(-1)?.response, 'bad-answer');
  });

  it("refuses another user's spam log without asking the verifier", async () => {
    const [log] = await t.db.selectFrom('spam_logs').select('id').where('user_id', '=', user.id).execute();
    const other = await createUser(t.db);
    const before = verifications.length;
    const res = await putStatus({ 'x-service-captcha-response': 'good-answer', 'x-service-spam-log-id': String(log.id) }, await createToken(t.db, other));
    assert.equal(res.statusCode, 409);
    assert.equal(verifications.length, before);
  });

  it('accepts the retry once the verifier confirms the CAPTCHA, and only once per spam log', async () => {
    const [log] = await t.db.selectFrom('spam_logs').select('id').where('user_id', '=', user.id).orderBy('id').execute();
    const headers = { 'x-service-captcha-response': 'good-answer', 'x-service-spam-log-id': String(log.id) };
    const res = await putStatus(headers);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().message, 'buy cheap pills');
    const sent = verifications.at(-1)!;
    assert.equal(sent.secret, 'test-secret');
    assert.equal(sent.response, 'good-answer');
    assert.equal(sent.remoteip, '127.0.0.1');
    const row = await t.db.selectFrom('spam_logs').select('recaptcha_verified').where('id', '=', log.id).executeTakeFirstOrThrow();
    assert.equal(row.recaptcha_verified, 1);
    const replay = await putStatus(headers);
    assert.equal(replay.statusCode, 409);
  });

  it('treats an unreachable verifier as a failed CAPTCHA', async () => {
    const down = await startTestApp({
      KILN_SPAM_PATTERNS: PATTERNS, KILN_RECAPTCHA_SITE_KEY: 'k', KILN_RECAPTCHA_SECRET: 's',
      KILN_RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
    });
    try {
      const u = await createUser(down.db);
      const tok = await createToken(down.db, u);
      const first = await down.request({ method: 'PUT', url: '/api/v4/user/status', token: tok, payload: { message: 'casino' } });
      assert.equal(first.statusCode, 409);
      const retry = await down.request({
        method: 'PUT', url: '/api/v4/user/status', token: tok, payload: { message: 'casino' },
        headers: { 'x-service-captcha-response': 'good-answer', 'x-service-spam-log-id': String(first.json().spam_log_id) },
      });
      assert.equal(retry.statusCode, 409);
    } finally {
      await down.close();
    }
  });
});
