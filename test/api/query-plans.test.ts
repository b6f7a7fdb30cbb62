/**
 * Every list filter is served by an index (issue 17, item 2; CONTRIBUTING: "Every list filter has
 * an index"). The test drives every list route the app describes in /api/v4/openapi.json (a GET
 * with a `per_page` parameter) with each of its filters, orders and scopes, as an administrator
 * and as a regular user, records every SELECT the app runs (src/db/query-log.ts), and reads each
 * statement's plan: `EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN (FORMAT JSON)` with
 * `enable_seqscan = off` on PostgreSQL (so the planner's choice shows which indexes exist, not the
 * size of a test database). A list added later is covered as soon as its route is in the
 * OpenAPI document. The rules are in test/helpers/query-plans.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { fullScans, listRequests, type OpenApiDocument, type Plan, type Schema, type Statement } from '../helpers/query-plans.ts';

const captured = new Map<string, Statement>();
let recording: string | null = null;

describe('query plans of every list', () => {
  let t: TestApp;
  let userToken: string;

  before(async () => {
    t = await startTestApp({}, {
      queryLog: (text, parameters) => {
        if (recording === null || !/^\s*(select|with)\b/i.test(text) || captured.has(text)) return;
        captured.set(text, { sql: text, parameters: [...parameters], route: recording });
      },
    });
  });
  after(async () => {
    await t?.close();
  });

  it('reads no large table in full for any filter of any list', async (ctx) => {
    const user = await createUser(t.db);
    userToken = await createToken(t.db, user, { scopes: ['api'] });
    // A real project (repository and all) with a pipeline of jobs, so that lists under it answer.
    const ci = await createCiProject(t);
    await pushFiles(t, ci, { '.gitlab-ci.yml': 'build:\n  script: make\ntest:\n  script: make test\n' });
    const pipeline = await createPipeline(t, ci);
    const projectId = ci.project.id;
    const job = await t.db.selectFrom('ci_builds').select('id').where('project_id', '=', projectId).executeTakeFirstOrThrow();
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'plans', path: 'plans' } });
    assert.equal(group.statusCode, 201, group.body);
    const snippet = await t.request({
      method: 'POST', url: '/api/v4/snippets', token: ROOT_TOKEN, payload: { title: 'plans', file_name: 'a.txt', content: 'a', visibility: 'public' },
    });
    assert.equal(snippet.statusCode, 201, snippet.body);
    const ids = {
      users: user.id, projects: projectId, groups: (group.json() as { id: number }).id, namespaces: (group.json() as { id: number }).id,
      snippets: (snippet.json() as { id: number }).id,
      pipeline_id: pipeline.id, job_id: job.id, user_id: user.id,
      // A commit's lists (its statuses among them) by the pipeline's commit.
      sha: pipeline.sha,
    };

    const doc = (await t.request({ url: '/api/v4/openapi.json', token: ROOT_TOKEN })).json() as OpenApiDocument;
    const requests = listRequests(doc, ids);
    assert.ok(requests.length > 100, `only ${requests.length} list requests found in the OpenAPI document`);
    const routes = new Set(requests.map((r) => r.route));
    for (const known of ['/api/v4/users', '/api/v4/projects/{id}/jobs', '/api/v4/projects/{id}/pipelines', '/api/v4/runners/all']) {
      assert.ok(routes.has(known), `${known} is not among the lists`);
    }
    for (const r of requests) {
      for (const token of [ROOT_TOKEN, userToken]) {
        recording = `GET ${r.url}`;
        const res = await t.request({ url: r.url, token });
        recording = null;
        assert.ok(res.statusCode < 500, `GET ${r.url}: ${res.statusCode} ${res.body}`);
      }
    }
    assert.ok(captured.size > 20, `only ${captured.size} statements recorded`);

    ctx.diagnostic(`${routes.size} list routes, ${requests.length} filter shapes (each as an administrator and as a user), ${captured.size} distinct statements`);
    const schema = await readSchema(t);
    const problems: string[] = [];
    for (const statement of captured.values()) {
      const plan = await explain(t, statement);
      for (const scan of fullScans(statement, plan, schema)) {
        problems.push(`${statement.route}\n    ${scan}\n    ${statement.sql}`);
      }
    }
    assert.deepEqual(problems, [], `${problems.length} statement(s) read a large table in full:\n  ${problems.join('\n  ')}`);
  });
});

/** Each table's columns and the columns that lead one of its indexes. */
async function readSchema(t: TestApp): Promise<Schema> {
  const columns = new Map<string, string[]>();
  const indexed = new Map<string, Set<string>>();
  const add = (table: string, column: string) => indexed.set(table, (indexed.get(table) ?? new Set()).add(column));
  if (t.dialect === 'postgres') {
    const info = await sql<{ table_name: string; column_name: string }>`select table_name, column_name from information_schema.columns where table_schema = 'public'`.execute(t.db);
    for (const r of info.rows) columns.set(r.table_name, [...(columns.get(r.table_name) ?? []), r.column_name]);
    const leads = await sql<{ table_name: string; column_name: string }>`
      select c.relname as table_name, a.attname as column_name from pg_index i
      join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum = i.indkey[0]
      where n.nspname = 'public'`.execute(t.db);
    for (const r of leads.rows) add(r.table_name, r.column_name);
    return { columns, indexed };
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(t.db);
  for (const { name } of tables.rows) {
    const info = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(t.db);
    columns.set(name, info.rows.map((r) => r.name));
    const leads = await sql<{ name: string | null }>`select ii.name from pragma_index_list(${name}) il, pragma_index_info(il.name) ii where ii.seqno = 0`.execute(t.db);
    for (const r of leads.rows) if (r.name) add(name, r.name);
  }
  return { columns, indexed };
}

async function explain(t: TestApp, statement: Statement): Promise<Plan> {
  if (t.dialect === 'sqlite') {
    const res = await t.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement.sql}`, statement.parameters));
    return { dialect: 'sqlite', details: res.rows.map((r) => r.detail) };
  }
  return t.db.transaction().execute(async (trx) => {
    // Without the choice of a sequential scan the planner takes an index whenever one can serve.
    await sql`set local enable_seqscan = off`.execute(trx);
    const res = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${statement.sql}`, statement.parameters));
    const json = res.rows[0]['QUERY PLAN'];
    return { dialect: 'postgres', root: (Array.isArray(json) ? json : JSON.parse(String(json)))[0].Plan };
  });
}
