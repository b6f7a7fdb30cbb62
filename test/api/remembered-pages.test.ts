/**
 * Remembered list answers (src/http/lists/remembered-pages.ts): the same bytes and page headers as a
 * computed answer, without the page's statements; gone at the next write; kept apart per caller;
 * never skipping a check; and a waiting job's queued_duration still moving with the clock.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';

const PAGE_HEADERS = ['content-type', 'link', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages'];
const pageHeaders = (headers: Record<string, unknown>) => Object.fromEntries(PAGE_HEADERS.map((h) => [h, headers[h]]));

describe('remembered list answers', () => {
  let t: TestApp;
  let statements: string[] = [];
  let user: UserRow;
  let userToken: string;
  let p: CiProject;

  before(async () => {
    t = await startTestApp({}, { queryLog: (sql) => { statements.push(sql); } });
    for (let i = 0; i < 4; i++) await createUser(t.db);
    user = await createUser(t.db);
    userToken = await createToken(t.db, user);
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build: {stage: build, script: x}\ntest: {stage: test, script: x}\n' });
  });
  after(async () => { await t.close(); });

  /** The answer and how many statements on `table` it ran. */
  const read = async (url: string, token: string | undefined, table: string, headers: Record<string, string> = {}) => {
    statements = [];
    const res = await t.request({ url, ...(token ? { token } : {}), headers });
    const ran = statements.filter((s) => s.includes(`from "${table}"`)).length;
    return { res, ran };
  };

  it('answers a page again with the same bytes and headers, without its statements, until a write', async () => {
    const url = '/api/v4/users?per_page=2&page=2';
    const first = await read(url, ROOT_TOKEN, 'users');
    assert.equal(first.res.statusCode, 200);
    assert.ok(first.ran > 0);
    // Asked for a second time within the TTL: computed again, and now remembered.
    const second = await read(url, ROOT_TOKEN, 'users');
    assert.ok(second.ran > 0);
    assert.equal(second.res.body, first.res.body);
    const again = await read(url, ROOT_TOKEN, 'users');
    assert.equal(again.res.statusCode, 200);
    assert.equal(again.ran, 0, 'a remembered page reads no users');
    assert.equal(again.res.body, first.res.body);
    assert.deepEqual(pageHeaders(again.res.headers), pageHeaders(first.res.headers));
    assert.equal(again.res.headers['content-type'], 'application/json');

    // A write through the app's handle: the next answer is computed, and shows it.
    const top = async () => (await read('/api/v4/users?per_page=1', ROOT_TOKEN, 'users')).res.json()[0];
    await top();
    await top();
    await createUser(t.db, { username: 'newest-user' });
    const after = await read(url, ROOT_TOKEN, 'users');
    assert.ok(after.ran > 0);
    assert.equal(Number(after.res.headers['x-total']), Number(first.res.headers['x-total']) + 1);
    assert.equal((await top()).username, 'newest-user');
    const newest = await top();
    assert.equal(newest.username, 'newest-user');

    // A write through the API moves it as well.
    const renamed = await t.request({ method: 'PUT', url: `/api/v4/users/${newest.id}`, token: ROOT_TOKEN, payload: { name: 'Renamed Newest' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((await top()).name, 'Renamed Newest');
  });

  it('keeps each caller\'s page apart: administrator, user, sudo', async () => {
    const url = '/api/v4/users?per_page=3';
    for (let i = 0; i < 3; i++) {
      const admin = await read(url, ROOT_TOKEN, 'users');
      const asUser = await read(url, userToken, 'users');
      assert.ok('is_admin' in admin.res.json()[0], 'an administrator sees UserWithAdmin');
      assert.ok(!('is_admin' in asUser.res.json()[0]), 'a user sees UserBasic');
      if (i === 2) assert.deepEqual([admin.ran, asUser.ran], [0, 0], 'both remembered, apart');
    }
    // The same administrator token acting as the user gets the user's page.
    const sudo = await read(url, ROOT_TOKEN, 'users', { sudo: user.username });
    assert.equal(sudo.res.statusCode, 200);
    assert.ok(!('is_admin' in sudo.res.json()[0]));
    // An anonymous caller is refused even though the same URL is remembered for others.
    const anonymous = await read(url, undefined, 'users');
    assert.equal(anonymous.res.statusCode, 403);
  });

  it('still counts a remembered search against the search rate limit', async () => {
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 3 } });
    assert.equal(set.statusCode, 200);
    const url = '/api/v4/users?search=user';
    assert.equal((await read(url, userToken, 'users')).res.statusCode, 200);
    assert.equal((await read(url, userToken, 'users')).res.statusCode, 200);
    const third = await read(url, userToken, 'users');
    assert.equal(third.res.statusCode, 200);
    assert.equal(third.ran, 0, 'the third search is remembered');
    // The remembered answer counted: the fourth search is one too many.
    assert.equal((await read(url, userToken, 'users')).res.statusCode, 429);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 30 } });
  });

  it('writes a waiting job\'s queued_duration as of each answer, the rest as remembered', async () => {
    const pipeline = await createPipeline(t, p);
    const url = `/api/v4/projects/${p.project.id}/jobs`;
    await read(url, p.ownerToken, 'ci_builds');
    const first = await read(url, p.ownerToken, 'ci_builds');
    assert.equal(first.res.statusCode, 200);
    const pending = (first.res.json() as { id: number; status: string; queued_duration: number }[]).find((j) => j.status === 'pending');
    assert.ok(pending, 'the build job waits for a runner');
    await new Promise((resolve) => setTimeout(resolve, 30));
    const again = await read(url, p.ownerToken, 'ci_builds');
    assert.equal(again.ran, 0, 'the page is remembered');
    const later = (again.res.json() as { id: number; queued_duration: number }[]).find((j) => j.id === pending.id)!;
    assert.ok(later.queued_duration >= pending.queued_duration + 0.02, `${later.queued_duration} moved on from ${pending.queued_duration}`);
    const strip = (jobs: Record<string, unknown>[]) => jobs.map(({ queued_duration: _q, ...rest }) => rest);
    assert.deepEqual(strip(again.res.json()), strip(first.res.json()));
    assert.deepEqual(pageHeaders(again.res.headers), pageHeaders(first.res.headers));

    // The pipeline's own lists are remembered the same way, and forgotten when a job changes.
    const jobsUrl = `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}/jobs`;
    await read(jobsUrl, p.ownerToken, 'ci_builds');
    await read(jobsUrl, p.ownerToken, 'ci_builds');
    assert.equal((await read(jobsUrl, p.ownerToken, 'ci_builds')).ran, 0);
    const cancel = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/jobs/${pending.id}/cancel`, token: p.ownerToken });
    assert.equal(cancel.statusCode, 201, cancel.body);
    const canceled = await read(jobsUrl, p.ownerToken, 'ci_builds');
    assert.ok(canceled.ran > 0);
    assert.equal((canceled.res.json() as { id: number; status: string }[]).find((j) => j.id === pending.id)!.status, 'canceled');
    const pipelines = `/api/v4/projects/${p.project.id}/pipelines`;
    await read(pipelines, p.ownerToken, 'ci_pipelines');
    const listed = await read(pipelines, p.ownerToken, 'ci_pipelines');
    assert.equal(listed.res.json()[0].status, 'canceled');
    const remembered = await read(pipelines, p.ownerToken, 'ci_pipelines');
    assert.equal(remembered.ran, 0);
    assert.equal(remembered.res.body, listed.res.body);
  });

  it('does not remember a page whose path and query are longer than 2 KB', async () => {
    const url = `/api/v4/users?per_page=2&search=${'x'.repeat(2_100)}`;
    for (let i = 0; i < 3; i++) {
      const res = await read(url, ROOT_TOKEN, 'users');
      assert.equal(res.res.statusCode, 200);
      assert.ok(res.ran > 0, `read ${i + 1} is computed`);
    }
  });

  it('refuses a caller without access before it looks for a remembered page', async () => {
    const url = `/api/v4/projects/${p.project.id}/jobs`;
    assert.equal((await read(url, p.ownerToken, 'ci_builds')).res.statusCode, 200);
    const stranger = await read(url, userToken, 'ci_builds');
    assert.equal(stranger.res.statusCode, 404);
  });
});
