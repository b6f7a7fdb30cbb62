/** Time tracking of an issue: estimate, spend, subtract, reset, stats; system notes; permissions; refusals. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createProjectWithMembers, systemNotesOf } from '../helpers/issues.ts';

describe('issue time tracking', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let reporterToken: string;
  let project: { id: number };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    const guest = await createUser(t.db);
    const reporter = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    reporterToken = await createToken(t.db, reporter);
    project = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 10 }, { user_id: reporter.id, access_level: 20 }]);
  });
  after(async () => { await t.close(); });

  const post = (token: string, iid: number, action: string, payload: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/issues/${iid}/${action}`, token, payload });

  it('sets and resets the estimate, logs and subtracts time, resets it, with the notes the Service writes', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    const est = await post(reporterToken, issue.iid, 'time_estimate', { duration: '1w 2d' });
    assert.equal(est.statusCode, 200, est.body);
    assert.deepEqual(est.json(), { time_estimate: 201600, total_time_spent: 0, human_time_estimate: '1w 2d', human_total_time_spent: null });

    const spent = await post(reporterToken, issue.iid, 'add_spent_time', { duration: '1h30m', summary: 'review' });
    assert.equal(spent.statusCode, 201, spent.body);
    assert.equal(spent.json().total_time_spent, 5400);
    assert.equal(spent.json().human_total_time_spent, '1h 30m');
    const less = await post(reporterToken, issue.iid, 'add_spent_time', { duration: '-30m' });
    assert.equal(less.json().total_time_spent, 3600);
    const tooMuch = await post(reporterToken, issue.iid, 'add_spent_time', { duration: '-2h' });
    assert.equal(tooMuch.statusCode, 400);
    assert.deepEqual(tooMuch.json(), { message: { base: ['Time to subtract exceeds the total time spent'] } });

    const stats = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${issue.iid}/time_stats`, token: guestToken });
    assert.deepEqual(stats.json(), { time_estimate: 201600, total_time_spent: 3600, human_time_estimate: '1w 2d', human_total_time_spent: '1h' });

    const reset = await post(reporterToken, issue.iid, 'reset_spent_time');
    assert.equal(reset.statusCode, 200);
    assert.equal(reset.json().total_time_spent, 0);
    const resetEst = await post(reporterToken, issue.iid, 'reset_time_estimate');
    assert.equal(resetEst.statusCode, 200);
    assert.equal(resetEst.json().time_estimate, 0);
    // The log keeps every entry; the reset balances it.
    const logs = await t.db.selectFrom('timelogs').select(['time_spent', 'summary']).where('issue_id', '=', issue.id).orderBy('id').execute();
    assert.deepEqual(logs, [{ time_spent: 5400, summary: 'review' }, { time_spent: -1800, summary: null }, { time_spent: -3600, summary: null }]);

    assert.deepEqual(await systemNotesOf(t.db, issue.id), [
      'changed time estimate to 1w 2d',
      'added 1h 30m of time spent',
      'subtracted 30m of time spent',
      'removed time spent',
      'removed time estimate',
    ]);
    // The issue entity shows the same numbers.
    const shown = await post(reporterToken, issue.iid, 'add_spent_time', { duration: '2' });
    assert.equal(shown.json().total_time_spent, 7200, 'a bare number is hours');
  });

  it('refuses durations it cannot read, overlong input, and callers below Reporter', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    const bad = await post(ownerToken, issue.iid, 'time_estimate', { duration: 'soon' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { message: { time_estimate: ['has an invalid format'] } });
    assert.equal((await post(ownerToken, issue.iid, 'time_estimate', { duration: '-1h' })).statusCode, 400);
    const badSpent = await post(ownerToken, issue.iid, 'add_spent_time', { duration: 'a while' });
    assert.deepEqual(badSpent.json(), { message: { 'timelogs.time_spent': ["can't be blank"] } });
    const missing = await post(ownerToken, issue.iid, 'time_estimate');
    assert.deepEqual(missing.json(), { message: '400 Bad request - "duration" not given' });
    assert.equal((await post(ownerToken, issue.iid, 'time_estimate', { duration: '1h'.repeat(200) })).statusCode, 400);
    assert.equal((await post(ownerToken, issue.iid, 'add_spent_time', { duration: '1h', summary: 'x'.repeat(256) })).statusCode, 400);

    const forbidden = await post(guestToken, issue.iid, 'time_estimate', { duration: '1h' });
    assert.equal(forbidden.statusCode, 403);
    assert.equal((await post(guestToken, issue.iid, 'add_spent_time', { duration: '1h' })).statusCode, 403);
    assert.equal((await post(ownerToken, 999, 'time_estimate', { duration: '1h' })).statusCode, 404);
    assert.deepEqual(await systemNotesOf(t.db, issue.id), []);
  });

  it('hides a confidential issue from a guest', async () => {
    const issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id, confidential: true });
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${issue.iid}/time_stats`, token: guestToken });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Issue Not Found' });
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${issue.iid}/time_stats`, token: reporterToken })).statusCode, 200);
  });
});
