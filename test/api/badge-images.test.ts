/**
 * Badge images (issue 33, item 5): GET /<namespace>/<project>/badges/<ref>/pipeline.svg and
 * coverage.svg as the Service 15.2's Projects::BadgesController answers them: every status's text
 * and colour, ignore_skipped, key_text / key_width and their bounds, style=flat-square, coverage of
 * the newest successful pipeline or of one job with the thresholds, refs holding slashes, read_build
 * (404 for anonymous and non-members of a private project), escaped text, well-formed XML, and the
 * project badges API's `%{default_branch}` image URL resolving to the image.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Parser } from 'htmlparser2';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';
import { createSession } from '../helpers/factories.ts';

interface Parsed { texts: string[]; widths: string[]; fills: string[]; tags: string[] }

/**
 * Parses the SVG as XML and fails on anything but the badge's own elements, properly nested:
 * text that escaped its element would show up here as an element of its own.
 */
function parseSvg(body: string): Parsed {
  const stack: string[] = [];
  const out: Parsed = { texts: [], widths: [], fills: [], tags: [] };
  let inText = false;
  let text = '';
  const allowed = new Set(['svg', 'lineargradient', 'stop', 'mask', 'rect', 'g', 'path', 'text']);
  const parser = new Parser({
    onopentag(name, attrs) {
      assert.ok(allowed.has(name.toLowerCase()), `unexpected element <${name}>`);
      stack.push(name);
      out.tags.push(name);
      if (name === 'svg') out.widths.push(attrs.width!);
      if (name === 'path' && attrs.fill) out.fills.push(attrs.fill);
      if (name === 'text') { inText = true; text = ''; }
    },
    ontext(data) { if (inText) text += data; else assert.equal(data.trim(), '', `stray text ${data}`); },
    onclosetag(name) {
      assert.equal(stack.pop(), name, 'elements close in order');
      if (name === 'text') { inText = false; out.texts.push(text.trim()); }
    },
    onerror(err) { throw err; },
  }, { xmlMode: true, decodeEntities: true });
  parser.write(body);
  parser.end();
  assert.equal(stack.length, 0, 'every element closed');
  assert.equal(out.tags[0], 'svg');
  return out;
}

describe('badge images', () => {
  let t: TestApp;
  let people: People;
  let projectId: number;
  let fullPath = '';
  let publicPath = '';
  let publicId = 0;
  let iid = 0;

  async function addPipeline(pid: number, ref: string, status: string, jobs: { name: string; status?: string; coverage?: number | null; retried?: boolean; createdAt?: string; type?: string }[] = []) {
    iid += 1;
    const now = new Date(Date.UTC(2026, 0, 1, 0, 0, iid)).toISOString();
    const row = await t.db.insertInto('ci_pipelines').values({
      iid, project_id: pid, ref, tag: 0, sha: 'a'.repeat(40), before_sha: '0'.repeat(40), source: 'push', status,
      user_id: people.users.owner.id, upstream_bridge_id: null, config_path: '.gitlab-ci.yml', commit_data: '{}',
      created_at: now, updated_at: now, started_at: null, finished_at: null,
    }).returning('id').executeTakeFirstOrThrow();
    for (const j of jobs) {
      await t.db.insertInto('ci_builds').values({
        type: j.type ?? 'build', project_id: pid, pipeline_id: row.id, name: j.name, stage: 'test', stage_idx: 0,
        status: j.status ?? 'success', run_when: 'on_success', allow_failure: 0, failure_reason: null, ref, tag: 0,
        user_id: people.users.owner.id, runner_id: null, token_digest: null, options: '{}', yaml_variables: '[]',
        job_variables: '[]', tag_list: '', needs: null, timeout: 3600, retried: j.retried ? 1 : 0,
        downstream_pipeline_id: null, created_at: j.createdAt ?? now, updated_at: now, queued_at: null, started_at: null,
        finished_at: null, erased_at: null, artifacts_expire_at: null, coverage: j.coverage ?? null,
      }).execute();
    }
    return row.id;
  }

  /** `null` asks anonymously. */
  const badge = (path: string, token: string | null = people.tokens.reporter) =>
    t.request({ method: 'GET', url: `/${path}`, ...(token ? { token } : {}) });

  async function svg(path: string, token: string | null = people.tokens.reporter): Promise<Parsed> {
    const res = await badge(path, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^image\/svg\+xml/);
    return parseSvg(res.body);
  }

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    projectId = await createProject(t, people);
    fullPath = (await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}`, token: people.tokens.owner })).json().path_with_namespace;
    publicId = await createProject(t, people, 'public');
    publicPath = (await t.request({ method: 'GET', url: `/api/v4/projects/${publicId}`, token: people.tokens.owner })).json().path_with_namespace;
  });
  after(async () => { await t.close(); });

  it('says "unknown" in grey for a ref without pipelines, with the no-cache headers', async () => {
    const res = await badge(`${fullPath}/badges/main/pipeline.svg`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'image/svg+xml; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate, no-store, no-cache');
    assert.equal(res.headers.expires, 'Fri, 01 Jan 1990 00:00:00 GMT');
    const p = parseSvg(res.body);
    assert.deepEqual(p.texts, ['pipeline', 'pipeline', 'unknown', 'unknown']);
    assert.deepEqual(p.fills, ['#555', '#9f9f9f', 'url(#b)']);
    assert.deepEqual(p.widths, ['116']);
  });

  it('shows the newest pipeline of the ref in its colour, "success" as "passed"', async () => {
    const cases: [string, string, string][] = [
      ['success', 'passed', '#4c1'], ['failed', 'failed', '#e05d44'], ['running', 'running', '#dfb317'],
      ['pending', 'pending', '#dfb317'], ['preparing', 'preparing', '#a7a7a7'], ['canceled', 'canceled', '#9f9f9f'],
      ['skipped', 'skipped', '#9f9f9f'], ['manual', 'manual', '#9f9f9f'], ['created', 'created', '#9f9f9f'],
    ];
    for (const [status, text, colour] of cases) {
      await addPipeline(projectId, 'status-ref', status);
      const p = await svg(`${fullPath}/badges/status-ref/pipeline.svg`);
      assert.deepEqual(p.texts, ['pipeline', 'pipeline', text, text], status);
      assert.equal(p.fills[1], colour, status);
    }
    // Another ref's pipelines do not count.
    await addPipeline(projectId, 'other', 'failed');
    assert.deepEqual((await svg(`${fullPath}/badges/status-ref/pipeline.svg`)).texts[2], 'created');
  });

  it('passes over skipped pipelines with ignore_skipped=true', async () => {
    await addPipeline(projectId, 'skips', 'success');
    await addPipeline(projectId, 'skips', 'skipped');
    assert.equal((await svg(`${fullPath}/badges/skips/pipeline.svg`)).texts[2], 'skipped');
    assert.equal((await svg(`${fullPath}/badges/skips/pipeline.svg?ignore_skipped=false`)).texts[2], 'skipped');
    assert.equal((await svg(`${fullPath}/badges/skips/pipeline.svg?ignore_skipped=true`)).texts[2], 'passed');
    assert.equal((await svg(`${fullPath}/badges/skips/pipeline.svg?ignore_skipped=yes`)).texts[2], 'passed');
  });

  it('takes key_text up to 64 characters and key_width within 1..512', async () => {
    let p = await svg(`${fullPath}/badges/main/pipeline.svg?key_text=${encodeURIComponent('build ✓')}&key_width=100`);
    assert.deepEqual(p.texts.slice(0, 2), ['build ✓', 'build ✓']);
    assert.deepEqual(p.widths, ['154']);
    p = await svg(`${fullPath}/badges/main/pipeline.svg?key_text=${'k'.repeat(64)}&key_width=512`);
    assert.equal(p.texts[0], 'k'.repeat(64));
    assert.deepEqual(p.widths, ['566']);
    // Too long a text, widths out of bounds or not numbers: the defaults.
    for (const width of ['0', '513', '-5', 'wide', '99999999999999999999']) {
      p = await svg(`${fullPath}/badges/main/pipeline.svg?key_text=${'k'.repeat(65)}&key_width=${width}`);
      assert.equal(p.texts[0], 'pipeline', width);
      assert.deepEqual(p.widths, ['116'], width);
    }
    // A leading number counts, as Ruby's to_i reads it.
    assert.deepEqual((await svg(`${fullPath}/badges/main/pipeline.svg?key_width=80px`)).widths, ['134']);
  });

  it('draws style=flat-square without the gradient and anything else as flat', async () => {
    await addPipeline(projectId, 'square', 'success');
    const res = await badge(`${fullPath}/badges/square/pipeline.svg?style=flat-square`);
    const p = parseSvg(res.body);
    assert.ok(!p.tags.includes('linearGradient') && !p.tags.includes('mask'));
    assert.deepEqual(p.texts, ['pipeline', 'passed']);
    assert.deepEqual(p.fills, ['#555', '#4c1']);
    assert.match(res.body, /shape-rendering="crispEdges"/);
    const other = parseSvg((await badge(`${fullPath}/badges/square/pipeline.svg?style=plastic`)).body);
    assert.ok(other.tags.includes('linearGradient'));
  });

  it('escapes key_text: markup in it stays text and the image stays well-formed XML', async () => {
    const evil = `<script>alert("x")</script>&'`;
    const res = await badge(`${fullPath}/badges/main/coverage.svg?key_text=${encodeURIComponent(evil)}&style=flat-square`);
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes('<script'));
    assert.match(res.body, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;&amp;&#39;/);
    assert.deepEqual(parseSvg(res.body).texts, [evil, 'unknown']);
    const flat = await badge(`${fullPath}/badges/main/pipeline.svg?key_text=${encodeURIComponent('a\u0001b</text><g>')}`);
    assert.deepEqual(parseSvg(flat.body).texts.slice(0, 2), ['a\uFFFDb</text><g>', 'a\uFFFDb</text><g>']);
  });

  it('reads refs that hold slashes, and answers 404 for what is not a badge', async () => {
    await addPipeline(projectId, 'feature/deep/ref', 'failed');
    assert.equal((await svg(`${fullPath}/badges/feature/deep/ref/pipeline.svg`)).texts[2], 'failed');
    assert.equal((await svg(`${fullPath}/badges/feature/pipeline.svg`)).texts[2], 'unknown');
    assert.equal((await badge(`${fullPath}/badges/main/pipeline.png`)).statusCode, 404);
    assert.equal((await badge(`${fullPath}/badges/pipeline.svg`)).statusCode, 404);
    assert.equal((await badge(`${fullPath}/badges/main/build.svg`)).statusCode, 404);
    assert.equal((await badge(`no-such-group/no-such-project/badges/main/pipeline.svg`)).statusCode, 404);
  });

  it('shows the newest successful pipeline\'s coverage, coloured by the thresholds', async () => {
    let p = await svg(`${fullPath}/badges/cov/coverage.svg`);
    assert.deepEqual(p.texts, ['coverage', 'coverage', 'unknown', 'unknown']);
    assert.deepEqual(p.widths, ['120']);
    assert.equal(p.fills[1], '#9f9f9f');
    // The mean of its latest jobs' coverage; retried jobs and newer failed pipelines do not count.
    await addPipeline(projectId, 'cov', 'success', [
      { name: 'a', coverage: 90 }, { name: 'b', coverage: 85.5 }, { name: 'b', coverage: 10, retried: true }, { name: 'c' },
    ]);
    await addPipeline(projectId, 'cov', 'failed', [{ name: 'a', coverage: 5, status: 'failed' }]);
    p = await svg(`${fullPath}/badges/cov/coverage.svg`);
    assert.deepEqual(p.texts.slice(2), ['87.75%', '87.75%']);
    assert.deepEqual(p.widths, ['116']);
    assert.equal(p.fills[1], '#dfb317'); // 75 ≤ 87.75 < 90: medium
    const colour = async (q: string) => (await svg(`${fullPath}/badges/cov/coverage.svg?${q}`)).fills[1];
    assert.equal(await colour('min_good=87'), '#4c1');
    assert.equal(await colour('min_good=95&min_acceptable=85'), '#a3c51c');
    assert.equal(await colour('min_medium=88'), '#e05d44');
    // Out-of-bounds thresholds fall back (min_acceptable must stay below min_good).
    assert.equal(await colour('min_good=101'), '#dfb317');
    assert.equal(await colour('min_good=90&min_acceptable=95'), '#dfb317');
    // min_good=88 lowers the defaults beneath it: acceptable 87, medium 75.
    assert.equal(await colour('min_good=88'), '#a3c51c');
    // key_text and key_width as for the pipeline badge.
    p = await svg(`${fullPath}/badges/cov/coverage.svg?key_text=tests&key_width=40`);
    assert.deepEqual(p.texts.slice(0, 2), ['tests', 'tests']);
    assert.deepEqual(p.widths, ['94']);
  });

  it('shows one job\'s coverage with job=, from the newest successful run among the ref\'s latest pipelines', async () => {
    await addPipeline(projectId, 'jobs', 'success', [{ name: 'unit', coverage: 70, createdAt: '2026-01-01T00:00:00.000Z' }]);
    await addPipeline(projectId, 'jobs', 'failed', [
      { name: 'unit', coverage: 96.456, createdAt: '2026-01-02T00:00:00.000Z' },
      { name: 'lint', coverage: 50, status: 'failed' },
    ]);
    const p = await svg(`${fullPath}/badges/jobs/coverage.svg?job=unit`);
    assert.deepEqual(p.texts.slice(2), ['96.46%', '96.46%']);
    assert.equal(p.fills[1], '#4c1');
    // Only successful jobs count; a name no job has is unknown; job= empty is the pipeline's.
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg?job=lint`)).texts[2], 'unknown');
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg?job=nope`)).texts[2], 'unknown');
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg?job=`)).texts[2], '70.00%');
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg`)).texts[2], '70.00%');
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg?job=${'j'.repeat(300)}`)).texts[2], 'unknown');
    // A newer run of the job without coverage is the one shown.
    await addPipeline(projectId, 'jobs', 'running', [{ name: 'unit', coverage: null, createdAt: '2026-01-03T00:00:00.000Z' }]);
    assert.equal((await svg(`${fullPath}/badges/jobs/coverage.svg?job=unit`)).texts[2], 'unknown');
  });

  it('answers 404 to those who may not read the project\'s jobs', async () => {
    for (const kind of ['pipeline', 'coverage']) {
      const url = `${fullPath}/badges/main/${kind}.svg`;
      assert.equal((await badge(url, null)).statusCode, 404);
      assert.equal((await badge(url, people.tokens.nonMember)).statusCode, 404);
      assert.equal((await badge(url, people.tokens.guest)).statusCode, 404); // read_build starts at Reporter
      assert.equal((await badge(url, people.tokens.reporter)).statusCode, 200);
      assert.equal((await badge(url, people.tokens.admin)).statusCode, 200);
    }
    // A README viewed in the browser sends the session cookie, which says who asks.
    const cookie = async (role: 'reporter' | 'nonMember') => `_service_session=${await createSession(t.db, people.users[role])}`;
    const url = `/${fullPath}/badges/main/pipeline.svg`;
    assert.equal((await t.app.inject({ method: 'GET', url, headers: { cookie: await cookie('reporter') } })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url, headers: { cookie: await cookie('nonMember') } })).statusCode, 404);
    // A public project's badge is anyone's while its pipelines are public, and hidden once not.
    assert.equal((await badge(`${publicPath}/badges/main/pipeline.svg`, null)).statusCode, 200);
    const off = await t.request({ method: 'PUT', url: `/api/v4/projects/${publicId}`, token: people.tokens.owner, payload: { public_builds: false } });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal((await badge(`${publicPath}/badges/main/pipeline.svg`, null)).statusCode, 404);
    assert.equal((await badge(`${publicPath}/badges/main/pipeline.svg`, people.tokens.reporter)).statusCode, 200);
  });

  it('resolves a project badge whose image URL points at the pipeline badge of %{default_branch}', async () => {
    const created = await t.request({
      method: 'POST', url: '/api/v4/projects', token: people.tokens.owner,
      payload: { name: `readme ${Math.random().toString(36).slice(2)}`, initialize_with_readme: true, default_branch: 'trunk/v2' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as number;
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${id}/badges`, token: people.tokens.owner,
      payload: {
        link_url: 'http://localhost/%{project_path}/-/pipelines',
        image_url: 'http://localhost/%{project_path}/badges/%{default_branch}/pipeline.svg?key_text=build',
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const rendered = new URL(res.json().rendered_image_url as string);
    assert.equal(rendered.pathname, `/${created.json().path_with_namespace}/badges/trunk/v2/pipeline.svg`);
    await addPipeline(id, 'trunk/v2', 'success');
    const p = await svg(`${rendered.pathname.slice(1)}${rendered.search}`, people.tokens.owner);
    assert.deepEqual(p.texts, ['build', 'build', 'passed', 'passed']);
  });
});
