/**
 * The merge request lists (project and group, issue 33) read a page's head pipelines and its
 * collaboration answers (allow_collaboration) in one statement each, whatever the number of
 * rows: a page of six requests runs as many statements as a page of two. The rows still show
 * each request's own pipeline icon, and the API's list (the same presenter) the right
 * allow_collaboration: true for a fork's request whose branch is unprotected, false for one a
 * protected branch pattern covers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';

describe('merge request lists: one statement for the page\'s pipelines and collaboration', () => {
  let t: TestApp;
  let statements: string[] = [];
  let project: { id: number };
  let fork: { id: number };
  const pipelines = new Map<number, number>();

  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.request({ method, url: `/api/v4${url}`, token: ROOT_TOKEN, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };

  /**
   * Until the background work the set-up queued (each request's merge status check, which reads
   * protected branches too) is done: the query log counts every statement of the process.
   */
  const settled = async () => {
    for (let i = 0; i < 500; i++) {
      const busy = await t.db.selectFrom('background_jobs').select('id')
        .where('state', 'in', ['queued', 'running']).where('run_at', '<=', new Date().toISOString()).executeTakeFirst();
      if (!busy) return t.app.runningHandlers.settled(10_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('background jobs never settled');
  };

  /** The page, asked once before so that what a warm server remembers is not counted, and its statements. */
  const page = async (url: string) => {
    await settled();
    await t.request({ method: 'GET', url });
    statements = [];
    const res = await t.request({ method: 'GET', url });
    assert.equal(res.statusCode, 200, res.body);
    const ran = statements;
    statements = [];
    return { body: res.body, ran };
  };

  const rowOf = (body: string, iid: number) => {
    const m = new RegExp(`<li class="mr-row" data-iid="${iid}">[\\s\\S]*?</li>`).exec(body);
    assert.ok(m, `row ${iid} listed`);
    return m[0];
  };

  before(async () => {
    t = await startTestApp({}, { queryLog: (sql) => { statements.push(sql); } });
    const group = await api('POST', '/groups', { name: 'mrq', path: 'mrq', visibility: 'public' });
    project = await api('POST', '/projects', { name: 'app', namespace_id: group.id, visibility: 'public', initialize_with_readme: true });
    fork = await api('POST', '/projects', { name: 'fork', namespace_id: group.id, visibility: 'public', initialize_with_readme: true });
    await api('POST', `/projects/${fork.id}/protected_branches`, { name: 'guarded-*' });
    await api('POST', `/projects/${project.id}/repository/commits`, {
      // Only the API creates pipelines: a push's or a request's would race the ones the test creates.
      branch: 'main', commit_message: 'CI', actions: [{
        action: 'create', file_path: '.gitlab-ci.yml',
        content: 'workflow: {rules: [{if: \'$CI_PIPELINE_SOURCE == "api"\'}]}\nbuild: {script: x}\n',
      }],
    });
    for (let i = 1; i <= 6; i++) {
      await api('POST', `/projects/${project.id}/repository/commits`, {
        branch: `f${i}`, start_branch: 'main', commit_message: `f${i}`, actions: [{ action: 'create', file_path: `f${i}.txt`, content: `${i}\n` }],
      });
      // Rows 1 and 5 also answer the search "small": the page of two.
      await api('POST', `/projects/${project.id}/merge_requests`, {
        source_branch: `f${i}`, target_branch: 'main', title: `Request ${i}${i === 1 || i === 5 ? ' small' : ''}`,
      });
      if (i <= 4) pipelines.set(i, (await api('POST', `/projects/${project.id}/pipeline?ref=f${i}`)).id);
    }
    // Requests 5 and 6 become a fork's requests that chose collaboration, as the rows of a fork's
    // requests are stored (source_project_id the fork): 6's branch is one the fork protects.
    await t.db.updateTable('merge_requests').set({ source_project_id: fork.id, allow_collaboration: 1 })
      .where('project_id', '=', project.id).where('iid', 'in', [5, 6]).execute();
    await t.db.updateTable('merge_requests').set({ source_branch: 'guarded-6' })
      .where('project_id', '=', project.id).where('iid', '=', 6).execute();
  });
  after(() => t.close());

  for (const [name, base] of [['project', '/mrq/app/-/merge_requests'], ['group', '/mrq/-/merge_requests']] as const) {
    it(`reads the ${name} page's head pipelines and collaboration in one statement each, the same for two rows as for six`, async () => {
      const six = await page(base);
      assert.equal((six.body.match(/class="mr-row"/g) ?? []).length, 6);
      for (let i = 1; i <= 6; i++) {
        const row = rowOf(six.body, i);
        const id = pipelines.get(i);
        if (id === undefined) assert.ok(!row.includes('mr-pipeline'), `request ${i} has no pipeline`);
        else assert.match(row, new RegExp(`class="mr-pipeline" href="/mrq/app/-/pipelines/${id}" aria-label="Pipeline [a-z_]+"`));
      }
      const reading = (table: string) => six.ran.filter((s) => s.includes(`"${table}"`)).length;
      assert.equal(reading('ci_pipelines'), 1, 'one statement reads the head pipelines');
      assert.equal(reading('protected_branches'), 1, 'one statement answers allow_collaboration');

      const two = await page(`${base}?search=small`);
      assert.equal((two.body.match(/class="mr-row"/g) ?? []).length, 2);
      assert.match(rowOf(two.body, 1), new RegExp(`/-/pipelines/${pipelines.get(1)}"`));
      // No statement per row: four more rows would be four more statements. A read remembered until
      // the next write (db/read-cache.ts) is read again when anything wrote between the two pages
      // (PostgreSQL once ran one more so), which is one statement, not four.
      assert.ok(six.ran.length < two.ran.length + 4, `six rows ran ${six.ran.length} statements, two rows ${two.ran.length}`);
    });
  }

  it('answers allow_collaboration for the fork\'s requests from the one statement', async () => {
    await settled();
    statements = [];
    const list: { iid: number; allow_collaboration?: boolean; head_pipeline?: { id: number } | null }[] = await api('GET', `/projects/${project.id}/merge_requests`);
    assert.equal(statements.filter((s) => s.includes('"protected_branches"')).length, 1);
    const byIid = new Map(list.map((mr) => [mr.iid, mr]));
    assert.equal(byIid.get(5)?.allow_collaboration, true, 'an unprotected branch of a public fork');
    assert.equal(byIid.get(6)?.allow_collaboration, false, 'a branch the fork protects');
    assert.equal(byIid.get(1)?.allow_collaboration, undefined, 'shown for a fork\'s request only');
    const one = await api('GET', `/projects/${project.id}/merge_requests/2`);
    assert.equal(one.head_pipeline?.id, pipelines.get(2), 'a single request\'s head pipeline from the same statement');
  });
});
