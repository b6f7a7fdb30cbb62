/**
 * A runner's contacts (src/domain/runners/contacts.ts, Ci::Runner#heartbeat): asking for jobs
 * writes the row only on a first contact, when what the runner says about itself changed, or once
 * the stored contact is older than 40–55 minutes; the answers show the latest contact anyway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('runner contacts', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN }); });
  after(async () => { await t.close(); });

  const stored = async (id: number) => (await t.db.selectFrom('ci_runners').select(['contacted_at', 'version']).where('id', '=', id).executeTakeFirstOrThrow());
  const shown = async (id: number) => {
    const res = await t.request({ url: `/api/v4/runners/${id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { contacted_at: string | null; online: boolean; status: string };
  };
  const ask = (runner: TestRunner, version = '15.2.0') => t.request({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: runner.token, info: { name: 'test-runner', version } } });

  it('writes a first contact, then answers later ones from memory without writing', async () => {
    const runner = await TestRunner.register(t);
    assert.equal((await stored(runner.id)).contacted_at, null);
    assert.equal((await shown(runner.id)).status, 'not_connected');
    assert.equal((await ask(runner)).statusCode, 204);
    const first = (await stored(runner.id)).contacted_at;
    assert.ok(first, 'the first contact is stored');
    await new Promise((resolve) => setTimeout(resolve, 5));

    const epoch = t.writes.value;
    assert.equal((await ask(runner)).statusCode, 204);
    assert.equal(t.writes.value, epoch, 'an idle runner asking again writes nothing');
    assert.equal((await stored(runner.id)).contacted_at, first);
    const answer = await shown(runner.id);
    assert.ok(answer.contacted_at! > first, `${answer.contacted_at} is the latest contact, after ${first}`);
    assert.equal(answer.online, true);
    assert.equal(answer.status, 'online');
    const graphql = await t.request({
      method: 'POST', url: '/api/graphql', token: ROOT_TOKEN,
      payload: { query: `{ runner(id: "gid://gitlab/Ci::Runner/${runner.id}") { contactedAt status } }` },
    });
    assert.equal(graphql.statusCode, 200, graphql.body);
    assert.deepEqual(graphql.json().data.runner, { contactedAt: answer.contacted_at, status: 'ONLINE' });
  });

  it('writes when the runner reports something new, or its stored contact is 40–55 minutes old', async () => {
    const runner = await TestRunner.register(t);
    await ask(runner);
    const first = (await stored(runner.id)).contacted_at!;
    assert.equal((await ask(runner, '15.3.0')).statusCode, 204);
    const upgraded = await stored(runner.id);
    assert.equal(upgraded.version, '15.3.0');
    assert.ok(upgraded.contacted_at! >= first);

    const longAgo = new Date(Date.now() - 56 * 60_000).toISOString();
    await t.db.updateTable('ci_runners').set({ contacted_at: longAgo }).where('id', '=', runner.id).execute();
    const epoch = t.writes.value;
    await ask(runner, '15.3.0');
    assert.ok(t.writes.value > epoch);
    assert.ok((await stored(runner.id)).contacted_at! > longAgo, 'a contact 56 minutes old is rewritten');
  });
});
