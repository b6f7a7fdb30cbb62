import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';

// Totals come from a remembered capped count (src/db/read-cache.ts); a write must show at once.
describe('pagination totals after writes', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < 5; i++) await createUser(t.db);
  });
  after(async () => { await t.close(); });

  const total = async () => {
    // page 2 forces a count query (page 1 short enough to count itself would not).
    const res = await t.request({ url: '/api/v4/users?per_page=2&page=2', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    return Number(res.headers['x-total']);
  };

  it('reuses the count between reads and recounts after every kind of write', async () => {
    const first = await total();
    assert.equal(first, 6);
    assert.equal(await total(), 6);
    const created = await createUser(t.db);
    assert.equal(await total(), 7);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${created.id}?hard_delete=true`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    assert.equal(await total(), 6);
  });
});

// Profile rows are remembered until the next write (src/db/read-cache.ts).
describe('user reads after writes', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('shows a change made through the database handle on the very next read', async () => {
    const u = await createUser(t.db, { name: 'Before' });
    const read = async () => (await t.request({ url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN })).json();
    assert.equal((await read()).name, 'Before');
    assert.equal((await read()).name, 'Before');
    await t.db.updateTable('users').set({ name: 'After' }).where('id', '=', u.id).execute();
    assert.equal((await read()).name, 'After');
    const follow = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/follow`, token: ROOT_TOKEN });
    assert.equal(follow.statusCode, 201);
    assert.equal((await read()).followers, 1);
  });
});

// A transaction's writes reach other connections only when it commits. On PostgreSQL a read on
// another pooled connection between the transaction's last statement and its commit sees the old
// row; the commit moves the write epoch so that such a read is not remembered past it. (SQLite has
// one connection: that read waits for the commit, and this test would wait for itself.)
describe('user reads around a transaction', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('does not remember a row read while a writing transaction was still open', { skip: process.env.KILN_TEST_DB !== 'postgres' ? 'PostgreSQL only: SQLite has one connection' : false }, async () => {
    const u = await createUser(t.db, { name: 'Committed' });
    const read = async () => (await t.request({ url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN })).json().name;
    await t.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ name: 'Uncommitted' }).where('id', '=', u.id).execute();
      assert.equal(await read(), 'Committed');
    });
    assert.equal(await read(), 'Uncommitted');
  });

  it('leaves the epoch alone when a transaction only read', async () => {
    const epoch = t.writes.value;
    await t.db.transaction().execute(async (trx) => trx.selectFrom('users').select('id').execute());
    assert.equal(t.writes.value, epoch);
    await t.db.transaction().execute(async (trx) => trx.updateTable('users').set({ bio: 'x' }).where('id', '=', 1).execute());
    assert.ok(t.writes.value > epoch);
  });
});

// A page's labels, the people beside its rows and a project's merge rules are remembered until the
// next write (issues.queries.ts labelsOfTargets, users-batch.queries.ts, read-cache.ts cachedRowsByIds).
describe('issue and merge request lists after writes', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('shows a renamed label, a renamed assignee and changed merge rules on the very next page', async () => {
    const api = (method: string, url: string, payload?: object) => t.request({ method, url: `/api/v4${url}`, token: ROOT_TOKEN, payload });
    const project = (await api('POST', '/projects', { name: 'cached', visibility: 'private' })).json() as { id: number };
    const dev = await createUser(t.db, { name: 'Dev Before' });
    assert.equal((await api('POST', `/projects/${project.id}/members`, { user_id: dev.id, access_level: 30 })).statusCode, 201);
    for (const name of ['bug', 'zeta']) {
      assert.equal((await api('POST', `/projects/${project.id}/labels`, { name, color: '#336699' })).statusCode, 201);
    }
    const issue = await api('POST', `/projects/${project.id}/issues`, { title: 'One', labels: 'zeta,bug', assignee_ids: [dev.id] });
    assert.equal(issue.statusCode, 201);
    const at = new Date().toISOString();
    const mr = await t.db.insertInto('merge_requests').values({
      iid: 1, project_id: project.id, source_project_id: project.id, source_branch: 'feature', target_branch: 'main', author_id: 1,
      title: 'Change', description: null, state: 'opened', merge_status: 'can_be_merged', draft: 0, created_at: at, updated_at: at,
    }).returning('id').executeTakeFirstOrThrow();
    const labelIds = await t.db.selectFrom('labels').select('id').where('project_id', '=', project.id).execute();
    await t.db.insertInto('label_links').values(labelIds.map((l) => ({
      label_id: l.id, target_type: 'MergeRequest', target_id: mr.id, created_at: at, updated_at: at,
    }))).execute();
    await t.db.insertInto('merge_request_assignees').values({ merge_request_id: mr.id, user_id: dev.id, created_at: at }).execute();
    const issues = async () => {
      const res = await api('GET', `/projects/${project.id}/issues`);
      assert.equal(res.statusCode, 200, res.body);
      const [i] = res.json() as { labels: string[]; assignees: { name: string }[] }[];
      return { labels: i.labels, assignee: i.assignees[0].name };
    };
    const mrs = async () => {
      const res = await api('GET', `/projects/${project.id}/merge_requests`);
      assert.equal(res.statusCode, 200, res.body);
      const [m] = res.json() as { labels: string[]; assignees: { name: string }[]; detailed_merge_status: string }[];
      return { labels: m.labels, assignee: m.assignees[0].name, status: m.detailed_merge_status };
    };
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await issues(), { labels: ['bug', 'zeta'], assignee: 'Dev Before' });
      assert.deepEqual(await mrs(), { labels: ['bug', 'zeta'], assignee: 'Dev Before', status: 'mergeable' });
    }
    // Renamed past the other label: each row's labels follow the new titles' order.
    assert.equal((await api('PUT', `/projects/${project.id}/labels/bug`, { new_name: 'zz-bug' })).statusCode, 200);
    await t.db.updateTable('users').set({ name: 'Dev After' }).where('id', '=', dev.id).execute();
    assert.equal((await api('PUT', `/projects/${project.id}`, { only_allow_merge_if_pipeline_succeeds: true })).statusCode, 200);
    assert.deepEqual(await issues(), { labels: ['zeta', 'zz-bug'], assignee: 'Dev After' });
    assert.deepEqual(await mrs(), { labels: ['zeta', 'zz-bug'], assignee: 'Dev After', status: 'ci_must_pass' });
  });
});
