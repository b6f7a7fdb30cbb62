/**
 * Two more things of a merge request's pages (issue 33): merge when pipeline succeeds set and
 * cancelled from the Overview's merge form (the API's PUT …/merge with merge_when_pipeline_succeeds
 * and POST …/cancel_merge_when_pipeline_succeeds), the request merged in git once a runner
 * finishes its pipeline; and a line comment started from the Changes tab — one form reached by a
 * link on each line, posting the Service's position through the API's diff note check — shown on
 * the Overview with its file and line. Each with the API's permissions, CSRF, bounds, the page
 * weight of a 20-file diff, and a real browser for the line comment flow and axe-core.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { LightMyRequestResponse } from 'fastify';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { createSession, createUser } from '../helpers/factories.ts';
import { postForm } from '../helpers/oauth.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import {
  assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs,
} from '../helpers/browser.ts';
import type { UserRow } from '../../src/db/types.ts';

/** Issue 33's budget: a page's HTML with its stylesheets and scripts. */
const WEIGHT_BUDGET = 150 * 1024;

describe('merge request page: merge when pipeline succeeds and line comments', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let dev: UserRow;
  let ownerCookie: string;
  let devCookie: string;
  let reporterCookie: string;
  let strangerCookie: string;

  const get = (url: string, c = ownerCookie) => t.request({ method: 'GET', url, headers: c ? { cookie: c } : {} });
  const csrfOf = (res: LightMyRequestResponse) => /name="authenticity_token" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  const mrs = () => `/${p.fullPath}/-/merge_requests`;
  const api = () => `/api/v4/projects/${p.project.id}/merge_requests`;
  const apiGet = async (url: string) => (await t.request({ method: 'GET', url, token: p.ownerToken })).json();
  const gitOut = (...args: string[]) => execFileSync('git', ['--git-dir', p.gitDir, ...args], { encoding: 'utf8' }).trim();

  async function pushBranch(branch: string, files: Record<string, string>): Promise<string> {
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/branches`, token: p.ownerToken, payload: { branch, ref: 'main' } });
    assert.equal(res.statusCode, 201, res.body);
    return pushFiles(t, p, files, { branch, message: `Work on ${branch}` });
  }

  async function openRequest(source: string): Promise<{ iid: number }> {
    const res = await t.request({ method: 'POST', url: api(), token: p.ownerToken, payload: { source_branch: source, target_branch: 'main', title: `Request ${source}` } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  /** The request once the background check has given it a merge status. */
  async function checked(iid: number): Promise<Record<string, any>> {
    for (let i = 0; i < 300; i += 1) {
      const body = await apiGet(`${api()}/${iid}`);
      if (body.merge_status !== 'unchecked' && body.merge_status !== 'checking') return body;
      await new Promise((r) => setTimeout(r, 30));
    }
    throw new Error('merge status never checked');
  }

  /** The hidden fields of the page's line comment form. */
  function lineFormFields(body: string): Record<string, string> {
    const form = /<form method="post" action="[^"]+" id="line-note-form"[\s\S]*?<\/form>/.exec(body)?.[0];
    assert.ok(form, 'the line comment form is drawn');
    return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
  }

  before(async () => {
    t = await startListeningApp({ KILN_JOB_POLL_MS: '20', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t, { visibility: 'private', name: 'mr-page-actions' });
    dev = await createUser(t.db, { username: 'mpadev', name: 'Dev Eloper' });
    const reporter = await createUser(t.db, { username: 'mparep' });
    const stranger = await createUser(t.db, { username: 'mpastranger' });
    for (const [user, level] of [[dev, 30], [reporter, 20]] as const) {
      const added = await t.request({
        method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: user.id, access_level: level },
      });
      assert.equal(added.statusCode, 201, added.body);
    }
    ownerCookie = `_service_session=${await createSession(t.db, p.owner)}`;
    devCookie = `_service_session=${await createSession(t.db, dev)}`;
    reporterCookie = `_service_session=${await createSession(t.db, reporter)}`;
    strangerCookie = `_service_session=${await createSession(t.db, stranger)}`;
    await pushFiles(t, p, { '.gitlab-ci.yml': 'test:\n  script: echo hi\n', 'a.txt': 'one\ntwo\nthree\n' }, { message: 'Initial commit' });
  });
  after(() => t.close());

  it('sets merge when pipeline succeeds from the merge form, cancels it, and merges in git when the pipeline succeeds', async () => {
    const head = await pushBranch('auto', { 'auto.txt': 'merged automatically\n' });
    const { iid } = await openRequest('auto');
    const pipeline = await createPipeline(t, p, 'auto');
    assert.equal((await checked(iid)).head_pipeline?.id, pipeline.id);
    const page = `${mrs()}/${iid}`;
    const row = () => t.db.selectFrom('merge_requests').selectAll().where('project_id', '=', p.project.id).where('iid', '=', iid).executeTakeFirstOrThrow();

    const shown = await get(page);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.match(shown.body, /<button type="submit" class="primary" name="merge_when_pipeline_succeeds" value="true">Merge when pipeline succeeds<\/button>/);
    assert.match(shown.body, />Merge immediately<\/button>/, 'the project does not require a pipeline: merging now stays possible');
    const token = csrfOf(shown);
    const reporterPage = await get(page, reporterCookie);
    assert.ok(!reporterPage.body.includes('Merge when pipeline succeeds'), 'reporters may not merge');
    const set = (cookie: string, fields: Record<string, string>) => postForm(t, `${page}/merge`, fields, { cookie });
    assert.equal((await set(reporterCookie, { authenticity_token: csrfOf(reporterPage), merge_when_pipeline_succeeds: 'true', sha: head })).statusCode, 403);
    assert.notEqual((await set(ownerCookie, { authenticity_token: 'forged', merge_when_pipeline_succeeds: 'true', sha: head })).statusCode, 303);
    const stale = await set(ownerCookie, { authenticity_token: token, merge_when_pipeline_succeeds: 'true', sha: 'c'.repeat(40) });
    assert.equal(stale.statusCode, 409);
    assert.match(stale.body, /The source branch has changed since the page was loaded/);
    assert.equal((await row()).merge_when_pipeline_succeeds, 0);

    const setOk = await set(ownerCookie, { authenticity_token: token, merge_when_pipeline_succeeds: 'true', sha: head, should_remove_source_branch: 'true' });
    assert.equal(setOk.statusCode, 303, setOk.body);
    let mr = await row();
    assert.deepEqual([mr.state, mr.merge_when_pipeline_succeeds, mr.merge_user_id], ['opened', 1, p.owner.id]);
    let api1 = await apiGet(`${api()}/${iid}`);
    assert.equal(api1.merge_when_pipeline_succeeds, true, 'the API sees what the page set');
    const waiting = await get(page, devCookie);
    assert.match(waiting.body, new RegExp(`<p id="auto-merge">Set by <a href="/${p.owner.username}">[^<]+</a> to be merged automatically when the pipeline succeeds`));
    assert.match(waiting.body, />Cancel auto-merge<\/button>/);
    assert.ok(!waiting.body.includes('id="merge-form"'), 'no merge form while the merge waits');
    assert.ok(!(await get(page, reporterCookie)).body.includes('Cancel auto-merge'), 'reporters may not cancel it');

    // Who may update the request cancels it (can_cancel_auto_merge?); reporters may not.
    const cancel = (cookie: string, tok: string) => postForm(t, `${page}/cancel_auto_merge`, { authenticity_token: tok }, { cookie });
    assert.equal((await cancel(reporterCookie, csrfOf(reporterPage))).statusCode, 403);
    assert.equal((await cancel(strangerCookie, csrfOf(await get('/', strangerCookie)))).statusCode, 404);
    assert.equal((await cancel(devCookie, csrfOf(waiting))).statusCode, 303);
    mr = await row();
    assert.deepEqual([mr.merge_when_pipeline_succeeds, mr.merge_user_id], [0, null]);
    assert.equal((await cancel(devCookie, csrfOf(waiting))).statusCode, 405, 'nothing to cancel, as the API');
    assert.match((await get(page)).body, /Merge when pipeline succeeds<\/button>/);

    assert.equal((await set(ownerCookie, { authenticity_token: token, merge_when_pipeline_succeeds: 'true', sha: head, should_remove_source_branch: 'true' })).statusCode, 303);
    // The runner takes the jobs (creating the branch ran a pipeline at main's commit too) and
    // reports success: the head pipeline succeeds and the request merges.
    const runner = await TestRunner.register(t);
    for (let job = await runner.request(); job; job = await runner.request()) {
      assert.equal((await runner.update(job, 'success')).statusCode, 200);
    }
    assert.equal((await apiGet(`/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`)).status, 'success');
    const deadline = Date.now() + 15_000;
    do {
      api1 = await apiGet(`${api()}/${iid}`);
      if (api1.state === 'merged') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    assert.equal(api1.state, 'merged', api1.merge_error);
    assert.equal(api1.merged_by.username, p.owner.username);
    const mainHead = gitOut('rev-parse', 'refs/heads/main');
    assert.equal(api1.merge_commit_sha, mainHead);
    assert.equal(gitOut('show', `${mainHead}:auto.txt`), 'merged automatically', 'the branch\'s change is on main');
    assert.equal(gitOut('for-each-ref', 'refs/heads/auto'), '', 'the source branch was removed as asked');
    assert.match((await get(page)).body, /id="merge-status">Merged by/);
  });

  it('starts a thread on a line of the Changes tab through the API\'s diff note check, shown with its file and line', async () => {
    await pushBranch('lines', { 'a.txt': 'one\nTWO\nthree\nfour\n' });
    const { iid } = await openRequest('lines');
    const refs = (await checked(iid)).diff_refs as { base_sha: string; head_sha: string; start_sha: string };
    const diffs = `${mrs()}/${iid}/diffs`;
    const page = await get(diffs, devCookie);
    assert.equal(page.statusCode, 200, page.body);
    // @@ -1,3 +1,4 @@: " one", "-two", "+TWO", " three", "+four": each line links to the form with its <old>_<new>.
    for (const [code, n] of [['1_1', 1], ['2_0', 2], ['0_2', 2], ['3_3', 3], ['0_4', 4]] as const) {
      assert.match(page.body, new RegExp(`<td class="ln"><a href="\\?line_code=0_${code}#lc">${n}</a></td>`), code);
    }
    assert.ok(!page.body.includes('id="line-note-form"'), 'no form until a line is chosen');
    assert.match((await get(diffs, reporterCookie)).body, /line_code=0_0_4/, 'reporters may comment');
    assert.equal((await get(diffs, '')).statusCode, 404);

    const added = await get(`${diffs}?line_code=0_0_4`, devCookie);
    assert.equal(added.statusCode, 200, added.body);
    assert.equal((added.body.match(/<form /g) ?? []).length - (page.body.match(/<form /g) ?? []).length, 1, 'one form more, under the line');
    assert.match(added.body, /<td class="line">\+four<\/td><\/tr><tr class="line-note" id="lc"><td><\/td><td><form method="post" action="[^"]+\/diff_note" id="line-note-form"/);
    const fields = lineFormFields(added.body);
    assert.deepEqual({ ...fields, authenticity_token: undefined }, {
      authenticity_token: undefined, base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha,
      old_path: 'a.txt', new_path: 'a.txt', new_line: '4',
    });
    for (const bad of ['x', '0_9_9', '5_0_1', '0_0_4x', `0_0_${'9'.repeat(12)}`, '0_0_4&line_code=0_1_1']) {
      assert.equal((await get(`${diffs}?line_code=${bad}`, devCookie)).statusCode, 404, bad);
    }

    const post = (cookie: string, f: Record<string, string>) => postForm(t, `${mrs()}/${iid}/diff_note`, f, { cookie });
    const notes = () => t.db.selectFrom('notes').selectAll().where('noteable_type', '=', 'MergeRequest').where('type', '=', 'DiffNote').execute();
    assert.notEqual((await post(devCookie, { ...fields, authenticity_token: 'forged', note: 'forged' })).statusCode, 303);
    assert.equal((await post(strangerCookie, { ...fields, authenticity_token: csrfOf(await get('/', strangerCookie)), note: 'x' })).statusCode, 404);
    const blank = await post(devCookie, { ...fields, note: '  ' });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /Note can&#39;t be blank/);
    // A line not in the diff, a line number that is not one, a path of another file: the API's refusal, nothing stored.
    for (const wrong of [{ new_line: '99' } as Record<string, string>, { new_line: '0' }, { new_line: '4'.repeat(12) }, { new_path: 'b.txt', old_path: 'b.txt' },
      { new_path: 'a'.repeat(5000), old_path: 'a'.repeat(5000) }, { head_sha: 'f'.repeat(40) }, { base_sha: 'nope' }]) {
      const res = await post(devCookie, { ...fields, ...wrong, note: 'misplaced' });
      assert.equal(res.statusCode, 400, JSON.stringify(wrong).slice(0, 80));
      assert.match(res.body, /The line is not in the diff of this merge request any more/);
      assert.match(res.body, /<textarea id="note-body" name="note" rows="4" required>misplaced<\/textarea>/, 'the typed text is kept');
    }
    assert.equal((await notes()).length, 0);

    const made = await post(devCookie, { ...fields, note: 'Count to **four**' });
    assert.equal(made.statusCode, 303, made.body);
    const [note] = await notes();
    assert.ok(note);
    assert.equal(made.headers.location, `${mrs()}/${iid}#note_${note.id}`);
    assert.equal(note.author_id, dev.id);
    assert.equal(note.resolvable, 1);
    assert.deepEqual(JSON.parse(note.position!), {
      base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha, old_path: 'a.txt', new_path: 'a.txt',
      position_type: 'text', old_line: null, new_line: 4, line_range: null,
    });
    // The API answers it as a diff note of that line.
    const discussions = await apiGet(`${api()}/${iid}/discussions`);
    const apiNote = discussions.flatMap((d: { notes: Record<string, any>[] }) => d.notes).find((n: Record<string, any>) => n.id === note.id);
    assert.equal(apiNote.type, 'DiffNote');
    assert.equal(apiNote.position.new_line, 4);

    // A removed line: its old number only.
    const removed = lineFormFields((await get(`${diffs}?line_code=0_2_0`, reporterCookie)).body);
    assert.deepEqual([removed.old_line, removed.new_line], ['2', undefined]);
    assert.equal((await post(reporterCookie, { ...removed, note: 'Why uppercase?' })).statusCode, 303);
    const overview = await get(`${mrs()}/${iid}`);
    assert.match(overview.body, /Comment on <a href="[^"]+\/diffs"><code>a\.txt<\/code><\/a> line 4<\/p>[\s\S]*Count to <strong>four<\/strong>/);
    assert.match(overview.body, /Comment on <a href="[^"]+\/diffs"><code>a\.txt<\/code><\/a> line 2 \(old\)<\/p>[\s\S]*Why uppercase\?/);
  });

  it('keeps the 20-file Changes page with its line links under the weight budget', async () => {
    const files: Record<string, string> = {};
    // 25 files of 40 changed lines each: a page draws 20 of them, 800 lines with a link each.
    for (let i = 0; i < 25; i += 1) {
      files[`src/file${String(i).padStart(2, '0')}.ts`] = Array.from({ length: 40 }, (_, n) => `export const value${n} = ${n} * ${i}; // line ${n}`).join('\n');
    }
    await pushBranch('weight', files);
    const { iid } = await openRequest('weight');
    const res = await get(`${mrs()}/${iid}/diffs`, devCookie);
    assert.equal(res.statusCode, 200);
    assert.equal((res.body.match(/<section class="diff-file"/g) ?? []).length, 20);
    assert.equal((res.body.match(/line_code=/g) ?? []).length, 20 * 40);
    const assets = [...res.body.matchAll(/<(?:link rel="stylesheet" href|script src)="([^"]+)"/g)].map((m) => m[1]!);
    let weight = res.rawPayload.length;
    for (const asset of assets) weight += (await get(asset, devCookie)).rawPayload.length;
    assert.ok(weight < WEIGHT_BUDGET, `the 20-file page weighs ${weight} bytes`);
    const links = res.body.length - res.body.replace(/<td class="ln">(<a [^>]+>\d+<\/a>)?<\/td>/g, '').length;
    console.log(`# 20-file Changes page (800 lines): HTML ${res.rawPayload.length} bytes (line links ${links}), with ${assets.length} assets ${weight} bytes`);
  });

  it('starts a line comment in a real browser, with axe-core clean', { skip: !hasChromium() }, async () => {
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, dev);
      const page = await openPage(browser.context);
      await page.goto(`${t.url}${mrs()}/2/diffs`);
      await assertAccessible(page);
      await page.click('a[href="?line_code=0_3_3#lc"]');
      await page.waitForSelector('#line-note-form');
      await assertAccessible(page);
      await screenshot(page, 'mr-line-note-form');
      await page.fill('#line-note-body', 'Typed on a line in a browser');
      await page.click('#line-note-form button[type=submit]');
      await page.waitForSelector('text=Typed on a line in a browser');
      assert.match(await page.content(), /<code>a\.txt<\/code><\/a> line 3<\/p>/);
      await assertAccessible(page);
      assertCleanConsole(page);
      await page.close();
    } finally {
      await browser.close();
    }
  });
});
