/**
 * Pages past offset 1,000 of the lists compiled per shape (GET /users, /projects/:id/jobs and
 * /projects/:id/pipelines) read their rows by id after walking the offset over ids alone
 * (ShapedList, issue 17). They answer exactly the rows, order and headers a plain offset query
 * gives, with filters and other orders too, on both engines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { insertUsersBulk } from '../helpers/seed.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('deep pages', () => {
  let t: TestApp;
  let project: CiProject;
  let userToken: string;

  before(async () => {
    t = await startTestApp();
    await insertUsersBulk(t.db, 'deep', 1_300);
    userToken = await createToken(t.db, await createUser(t.db, { username: 'deep-reader' }));
    project = await createCiProject(t);
    await pushFiles(t, project, { '.gitlab-ci.yml': 'build:\n  script: make\n' });
    const first = await createPipeline(t, project);
    const pipeline = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    const [job] = await t.db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', first.id).execute();
    // 1,200 more pipelines with one job each, in a few multi-row inserts.
    const { id: _p, ...p } = pipeline;
    const { id: _j, ...j } = job;
    for (let from = 2; from <= 1_201; from += 300) {
      const ids = await t.db.insertInto('ci_pipelines')
        .values(Array.from({ length: 300 }, (_, k) => ({ ...p, iid: from + k, status: k % 3 === 0 ? 'failed' : 'success' })))
        .returning('id').execute();
      await t.db.insertInto('ci_builds').values(ids.map(({ id }, k) => ({ ...j, pipeline_id: id, status: k % 3 === 0 ? 'failed' : 'success' }))).execute();
    }
  });
  after(() => t.close());

  const get = (url: string, token = ROOT_TOKEN) => t.request({ method: 'GET', url, token });

  /** The ids of `url`'s page `page`, and its headers, deep (offset ≥ 1,000) and as the page before the cut. */
  async function samePages(url: string, expected: (offset: number, limit: number) => Promise<number[]>, token = ROOT_TOKEN) {
    for (const [page, perPage] of [[11, 100], [12, 100], [13, 100], [51, 20], [1001, 1]] as const) {
      const res = await get(`${url}${url.includes('?') ? '&' : '?'}page=${page}&per_page=${perPage}`, token);
      assert.equal(res.statusCode, 200, res.body);
      const got = (res.json() as { id: number }[]).map((r) => r.id);
      assert.deepEqual(got, await expected((page - 1) * perPage, perPage), `${url} page ${page}`);
      assert.equal(res.headers['x-page'], String(page));
      if (got.length === perPage) assert.match(String(res.headers.link), /rel="next"/);
    }
  }

  it('GET /users as an administrator: whole rows with their extras, in every order', async () => {
    for (const [query, order] of [['', 'id desc'], ['order_by=name&sort=asc', 'name asc, id asc'], ['search=deep', 'id desc']] as const) {
      await samePages(`/api/v4/users${query ? `?${query}` : ''}`, async (offset, limit) => {
        let q = t.db.selectFrom('users').select('id');
        if (query.includes('search')) q = q.where('username', 'like', '%deep%');
        const [column, direction] = order.split(', ')[0].split(' ') as ['id' | 'name', 'asc' | 'desc'];
        q = q.orderBy(column, direction);
        if (column !== 'id') q = q.orderBy('id', direction);
        return (await q.limit(limit).offset(offset).execute()).map((r) => r.id);
      });
    }
    const deep = (await get('/api/v4/users?page=11&per_page=100')).json() as Record<string, unknown>[];
    assert.equal(deep[0].followers, 0);
    assert.deepEqual(deep[0].identities, []);
    assert.ok('namespace_id' in deep[0] && 'is_admin' in deep[0]);
  });

  it('GET /users as a regular user: UserBasic rows, blocked users left out', async () => {
    await t.db.updateTable('users').set({ state: 'blocked' }).where('username', 'in', ['deep00100', 'deep00200']).execute();
    await samePages('/api/v4/users', async (offset, limit) => (await t.db.selectFrom('users').select('id')
      .where('state', 'not in', ['blocked', 'ldap_blocked', 'banned']).orderBy('id', 'desc').limit(limit).offset(offset).execute()).map((r) => r.id), userToken);
    const row = ((await get('/api/v4/users?page=11&per_page=100', userToken)).json() as Record<string, unknown>[])[0];
    assert.deepEqual(Object.keys(row).sort(), ['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
  });

  it('GET /projects/:id/jobs, with and without scope', async () => {
    for (const scope of ['', 'scope=failed']) {
      await samePages(`/api/v4/projects/${project.project.id}/jobs${scope ? `?${scope}` : ''}`, async (offset, limit) => {
        let q = t.db.selectFrom('ci_builds').select('id').where('project_id', '=', project.project.id).where('type', '=', 'build');
        if (scope) q = q.where('status', '=', 'failed');
        return (await q.orderBy('id', 'desc').limit(limit).offset(offset).execute()).map((r) => r.id);
      });
    }
  });

  it('GET /projects/:id/pipelines, with a status and in another order', async () => {
    for (const [query, column, direction] of [['', 'id', 'desc'], ['status=success&order_by=status&sort=asc', 'status', 'asc']] as const) {
      await samePages(`/api/v4/projects/${project.project.id}/pipelines${query ? `?${query}` : ''}`, async (offset, limit) => {
        let q = t.db.selectFrom('ci_pipelines').select('id').where('project_id', '=', project.project.id);
        if (query.includes('status=success')) q = q.where('status', '=', 'success');
        q = q.orderBy(column, direction);
        if (column !== 'id') q = q.orderBy('id', direction);
        return (await q.limit(limit).offset(offset).execute()).map((r) => r.id);
      });
    }
  });
});
