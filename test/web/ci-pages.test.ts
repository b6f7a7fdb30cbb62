/**
 * The CI pages (issue 33 item 4): pipelines, a pipeline's graph, jobs, a job's log rendered from
 * ANSI and followed live, the raw log, retry/cancel/play/erase, the CI lint editor — each with
 * the API's permission checks, and a real browser watching a running job's log grow.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';
import { createSession, createToken, createUser } from '../helpers/factories.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { postForm } from '../helpers/oauth.ts';
import {
  assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs,
} from '../helpers/browser.ts';
import type { UserRow } from '../../src/db/types.ts';

const CI = `
stages: [build, test, deploy]
build:
  stage: build
  script: [make]
test:
  stage: test
  needs: [build]
  script: [make test]
lint:
  stage: test
  script: [make lint]
deploy:
  stage: deploy
  script: [make deploy]
  when: manual
`;

const XSS = '<script>alert("log")</script><img src=x onerror=alert(1)>';
const LOG = [
  '\x1b[0Ksection_start:1700000000:prepare_script[collapsed=true]\r\x1b[0K\x1b[36;1mPreparing the "shell" executor\x1b[0;m',
  'Using Shell executor...',
  '\x1b[0Ksection_end:1700000001:prepare_script\r\x1b[0K',
  `\x1b[32;1m$ echo ${XSS}\x1b[0;m`,
  XSS,
  'progress 10%\rprogress 100%',
  '',
].join('\n');

describe('CI pages', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let runner: TestRunner;
  let cookie: string;
  let pipelineId: number;
  let buildJob: JobPayload;
  let stranger: UserRow;
  let strangerCookie: string;
  let reporterCookie: string;

  const get = (url: string, c = cookie) => t.request({ method: 'GET', url, headers: c ? { cookie: c } : {} });
  const csrfOf = (res: LightMyRequestResponse) => /name="authenticity_token" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  const base = () => `/${p.fullPath}`;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t, { visibility: 'private' });
    cookie = `_service_session=${await createSession(t.db, p.owner)}`;
    stranger = await createUser(t.db);
    strangerCookie = `_service_session=${await createSession(t.db, stranger)}`;
    const reporter = await createUser(t.db);
    const added = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken,
      payload: { user_id: reporter.id, access_level: 20 },
    });
    assert.equal(added.statusCode, 201, added.body);
    reporterCookie = `_service_session=${await createSession(t.db, reporter)}`;
    await pushFiles(t, p, { '.gitlab-ci.yml': CI }, { message: `CI <b>bold</b> ${XSS}` });
    pipelineId = (await createPipeline(t, p)).id;
    runner = await TestRunner.register(t);
    buildJob = await runner.requestJob();
    assert.equal((await runner.appendTrace(buildJob, LOG)).statusCode, 202);
    assert.equal((await runner.update(buildJob, 'success')).statusCode, 200);
  });
  after(() => t.close());

  it('lists the pipelines with their stages and jobs, to the project\'s members only', async () => {
    const res = await get(`${base()}/-/pipelines`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.headers['content-security-policy'] as string, /script-src 'self'/);
    assert.match(res.body, new RegExp(`href="/${p.fullPath}/-/pipelines/${pipelineId}">#${pipelineId}<`));
    for (const name of ['build', 'test', 'lint', 'deploy']) assert.match(res.body, new RegExp(`>${name}</a>`));
    // The commit title is text, never markup.
    assert.ok(!res.body.includes('<b>bold</b>') && res.body.includes('&lt;b&gt;bold&lt;/b&gt;'));
    assert.ok(!res.body.includes('<script>alert'));
    // A private project's pages are the same 404 page to a stranger and to the signed-out.
    for (const c of [strangerCookie, '']) {
      const hidden = await get(`${base()}/-/pipelines`, c);
      assert.equal(hidden.statusCode, 404);
      assert.ok(!hidden.body.includes('build'));
    }
    const finished = await get(`${base()}/-/pipelines?scope=finished`);
    assert.equal(finished.statusCode, 200);
    assert.ok(!finished.body.includes(`#${pipelineId}<`), 'a running pipeline is not finished');
    const byRef = await get(`${base()}/-/pipelines?ref=nope`);
    assert.match(byRef.body, /No pipelines to show/);
  });

  it('draws the pipeline graph: stages as columns, needs as links, actions for developers', async () => {
    const res = await get(`${base()}/-/pipelines/${pipelineId}`);
    assert.equal(res.statusCode, 200, res.body);
    const jobs = await pipelineJobs(t, p, pipelineId);
    const build = jobs.find((j) => j.name === 'build')!;
    assert.match(res.body, /aria-label="Stage build"[\s\S]*aria-label="Stage test"[\s\S]*aria-label="Stage deploy"/);
    assert.match(res.body, new RegExp(`needs <a href="#job-${build.id}">build</a>`));
    assert.match(res.body, /<button type="submit">Cancel running<\/button>/);
    const asReporter = await get(`${base()}/-/pipelines/${pipelineId}`, reporterCookie);
    assert.equal(asReporter.statusCode, 200);
    assert.ok(!asReporter.body.includes('Cancel running'), 'reporters see no actions');
    assert.equal((await get(`${base()}/-/pipelines/999999`)).statusCode, 404);
    assert.equal((await get(`${base()}/-/pipelines/abc`)).statusCode, 404);
  });

  it('renders a job log from ANSI with sections, every text escaped, and no inline style', async () => {
    const res = await get(`${base()}/-/jobs/${buildJob.id}`);
    assert.equal(res.statusCode, 200, res.body);
    const log = /<pre class="job-log"[^>]*>([\s\S]*?)<\/pre>/.exec(res.body)![1]!;
    assert.match(log, /class="log-line section-header collapsed" data-section="prepare_script"/);
    assert.match(log, /data-sections="prepare_script"><span class="ln">2<\/span>Using Shell executor/);
    assert.match(log, /<span class="ansi-bold ansi-cyan-fg">Preparing the &quot;shell&quot; executor<\/span>/);
    assert.ok(!log.includes('<script') && !log.includes('<img') && log.includes('&lt;script&gt;alert(&quot;log&quot;)'));
    assert.ok(!/style=/.test(log), 'no style attribute the policy would refuse');
    assert.match(log, />progress 100%<\/div>/, 'a carriage return shows what the line ended as');
    assert.ok(!log.includes('section_end'), 'section markers are not shown');
    const follow = /<div id="log-follow" hidden data-url="([^"]+)" data-offset="(\d+)" data-line="(\d+)" data-sections="([^"]*)" data-active="0">/.exec(res.body);
    assert.ok(follow, 'the live view starts where the page ends');
    assert.equal(Number(follow[2]), Buffer.byteLength(LOG));
    const raw = await get(`${base()}/-/jobs/${buildJob.id}/raw`);
    assert.equal(raw.statusCode, 200);
    assert.match(raw.headers['content-type'] as string, /^text\/plain/);
    assert.equal(raw.body, LOG);
    assert.equal((await get(`${base()}/-/jobs/${buildJob.id}`, strangerCookie)).statusCode, 404);
  });

  it('follows a running job\'s log from an offset, whole lines only, until it finishes', async () => {
    const job = await runner.requestJob();
    const url = `${base()}/-/jobs/${job.id}`;
    await runner.appendTrace(job, '\x1b[0Ksection_start:1700000002:step_script\r\x1b[0KStep\nfirst line\npartial');
    const page = await get(url);
    const follow = /data-offset="(\d+)" data-line="(\d+)" data-sections="([^"]*)" data-active="1"/.exec(page.body)!;
    assert.ok(follow, page.body);
    assert.equal(follow[3], 'step_script');
    assert.ok(!page.body.includes('partial'), 'a line without its newline waits');
    const poll1 = JSON.parse((await get(`${url}/trace.json?offset=${follow[1]}&line=${follow[2]}&sections=${follow[3]}`)).body);
    assert.deepEqual({ html: poll1.html, complete: poll1.complete }, { html: '', complete: false });
    await runner.appendTrace(job, ' done\nsecond \x1b[31mred\x1b[0m\n');
    const poll2 = JSON.parse((await get(`${url}/trace.json?offset=${poll1.offset}&line=${poll1.line}&sections=${poll1.sections}`)).body);
    assert.match(poll2.html, /data-sections="step_script"><span class="ln">3<\/span>partial done<\/div>/);
    assert.match(poll2.html, /<span class="ln">4<\/span>second <span class="ansi-red-fg">red<\/span>/);
    assert.equal(poll2.complete, false);
    await runner.appendTrace(job, 'last words');
    await runner.update(job, 'failed', 'script_failure');
    const poll3 = JSON.parse((await get(`${url}/trace.json?offset=${poll2.offset}&line=${poll2.line}&sections=${poll2.sections}`)).body);
    assert.match(poll3.html, /<span class="ln">5<\/span>last words<\/div>/);
    assert.equal(poll3.complete, true);
    assert.equal(poll3.status, 'failed');
    const bad = await get(`${url}/trace.json?offset=-1&line=x&sections=%3Cscript%3E`);
    assert.equal(bad.statusCode, 200, 'bad offsets read from the start');
    assert.ok(!bad.body.includes('<script>'));
  });

  it('retries, cancels, plays and erases jobs through forms with the CSRF token; reporters may not', async () => {
    const jobs = await pipelineJobs(t, p, pipelineId);
    const failed = jobs.find((j) => j.status === 'failed')!;
    const page = await get(`${base()}/-/jobs/${failed.id}`);
    assert.match(page.body, /<button type="submit" class="primary">Retry<\/button>/);
    const token = csrfOf(page);
    const forged = await postForm(t, `${base()}/-/jobs/${failed.id}/retry`, { authenticity_token: 'forged' }, { cookie });
    assert.notEqual(forged.statusCode, 303, 'a forged form does nothing');
    const reporterPage = await get(`${base()}/-/jobs/${failed.id}`, reporterCookie);
    assert.ok(!reporterPage.body.includes('>Retry<'));
    const denied = await postForm(t, `${base()}/-/jobs/${failed.id}/retry`, { authenticity_token: csrfOf(reporterPage) }, { cookie: reporterCookie });
    assert.equal(denied.statusCode, 403);
    const retried = await postForm(t, `${base()}/-/jobs/${failed.id}/retry`, { authenticity_token: token }, { cookie });
    assert.equal(retried.statusCode, 303, retried.body);
    const newId = Number(/\/-\/jobs\/(\d+)$/.exec(retried.headers.location as string)![1]);
    assert.ok(newId > failed.id);
    const after = await pipelineJobs(t, p, pipelineId);
    assert.equal(after.find((j) => j.id === newId)?.status, 'pending');

    const manual = after.find((j) => j.name === 'deploy')!;
    const manualPage = await get(`${base()}/-/jobs/${manual.id}`);
    assert.match(manualPage.body, /This job has not started yet/, 'a manual job waits for its stage');

    const cancel = await postForm(t, `${base()}/-/jobs/${newId}/cancel`, { authenticity_token: token }, { cookie });
    assert.equal(cancel.statusCode, 303);
    assert.equal((await pipelineJobs(t, p, pipelineId)).find((j) => j.id === newId)?.status, 'canceled');

    const erase = await postForm(t, `${base()}/-/jobs/${buildJob.id}/erase`, { authenticity_token: token }, { cookie });
    assert.equal(erase.statusCode, 303);
    const erased = await get(`${base()}/-/jobs/${buildJob.id}`);
    assert.match(erased.body, /The log was erased/);

    const retryPipeline = await postForm(t, `${base()}/-/pipelines/${pipelineId}/retry`, { authenticity_token: token }, { cookie });
    assert.equal(retryPipeline.statusCode, 303);
    assert.equal(retryPipeline.headers.location, `/${p.fullPath}/-/pipelines/${pipelineId}`);
    const cancelPipeline = await postForm(t, `${base()}/-/pipelines/${pipelineId}/cancel`, { authenticity_token: token }, { cookie });
    assert.equal(cancelPipeline.statusCode, 303);
    assert.equal((await pipelineJobs(t, p, pipelineId)).filter((j) => j.status === 'pending' || j.status === 'running').length, 0);
    assert.equal((await postForm(t, `${base()}/-/jobs/${buildJob.id}/explode`, { authenticity_token: token }, { cookie })).statusCode, 404);
  });

  it('lists jobs by scope', async () => {
    const all = await get(`${base()}/-/jobs`);
    assert.equal(all.statusCode, 200);
    assert.match(all.body, new RegExp(`#${buildJob.id} build`));
    const running = await get(`${base()}/-/jobs?scope=running`);
    assert.ok(!running.body.includes(`#${buildJob.id} build`));
  });

  it('validates CI configuration in the lint editor, for developers', async () => {
    const form = await get(`${base()}/-/ci/lint`);
    assert.equal(form.statusCode, 200);
    const token = csrfOf(form);
    const ok = await postForm(t, `${base()}/-/ci/lint`, { authenticity_token: token, content: CI }, { cookie });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /Syntax is correct/);
    assert.match(ok.body, /<td>test<\/td><td>test<\/td><td>on_success<\/td>/);
    const bad = await postForm(t, `${base()}/-/ci/lint`, { authenticity_token: token, content: `job:\n  script: 1\n  <x>: 2\n` }, { cookie });
    assert.match(bad.body, /This CI configuration is invalid/);
    assert.ok(!bad.body.includes('<x>'));
    assert.equal((await get(`${base()}/-/ci/lint`, reporterCookie)).statusCode, 403);
    assert.equal((await get(`${base()}/-/ci/lint`, strangerCookie)).statusCode, 404);
  });

  it('manages variables, the registration token and triggers on the CI/CD settings page, for maintainers', async () => {
    const settings = `${base()}/-/settings/ci_cd`;
    assert.equal((await get(`${base()}/-/settings`)).headers.location, settings);
    const page = await get(settings);
    assert.equal(page.statusCode, 200, page.body);
    const token = csrfOf(page);
    assert.match(page.body, new RegExp(`#${runner.id} test runner`));
    const oldToken = /id="registration-token">([^<]+)</.exec(page.body)![1];
    assert.equal((await get(settings, reporterCookie)).statusCode, 403);
    assert.equal((await get(settings, strangerCookie)).statusCode, 404);

    const add = await postForm(t, `${settings}/variables`, {
      authenticity_token: token, key: 'DEPLOY_SECRET', value: 'hunter2-value', protected: 'true', masked: 'true', environment_scope: '*',
    }, { cookie });
    assert.equal(add.statusCode, 303, add.body);
    const withVar = await get(settings);
    assert.match(withVar.body, /<code>DEPLOY_SECRET<\/code>/);
    assert.ok(!withVar.body.includes('hunter2-value'), 'values are never on the page');
    const api = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/variables/DEPLOY_SECRET`, token: p.ownerToken });
    assert.equal(api.json().value, 'hunter2-value');
    assert.equal(api.json().masked, true);
    const dup = await postForm(t, `${settings}/variables`, { authenticity_token: token, key: 'DEPLOY_SECRET', value: 'x'.repeat(8) }, { cookie });
    assert.equal(dup.statusCode, 400);
    assert.match(dup.body, /has already been taken/);
    const short = await postForm(t, `${settings}/variables`, { authenticity_token: token, key: 'SHORT', value: 'abc', masked: 'true' }, { cookie });
    assert.equal(short.statusCode, 400, 'a masked value follows the API\'s rules');
    const varId = (await t.db.selectFrom('ci_variables').select('id').where('key', '=', 'DEPLOY_SECRET').executeTakeFirstOrThrow()).id;
    const del = await postForm(t, `${settings}/variables/${varId}/delete`, { authenticity_token: token }, { cookie });
    assert.equal(del.statusCode, 303);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/variables/DEPLOY_SECRET`, token: p.ownerToken })).statusCode, 404);

    const reset = await postForm(t, `${settings}/reset_registration_token`, { authenticity_token: token }, { cookie });
    assert.equal(reset.statusCode, 303);
    const newToken = /id="registration-token">([^<]+)</.exec((await get(settings)).body)![1];
    assert.notEqual(newToken, oldToken);

    const trig = await postForm(t, `${settings}/triggers`, { authenticity_token: token, description: 'deploy <hook>' }, { cookie });
    assert.equal(trig.statusCode, 200);
    const shown = /id="new-trigger-token">(glptt-[0-9a-f]+)</.exec(trig.body)![1];
    const run = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/trigger/pipeline`, payload: { token: shown, ref: 'main' } });
    assert.equal(run.statusCode, 201, run.body);
    const later = await get(settings);
    assert.ok(!later.body.includes(shown), 'the token is shown once');
    assert.match(later.body, /deploy &lt;hook&gt;/);
    const trigId = Number(/triggers\/(\d+)\/delete/.exec(later.body)![1]);
    assert.equal((await postForm(t, `${settings}/triggers/${trigId}/delete`, { authenticity_token: token }, { cookie })).statusCode, 303);
    assert.equal((await postForm(t, `${settings}/triggers/${trigId}/delete`, { authenticity_token: token }, { cookie })).statusCode, 404);
    // Ten digits past the integer range name no row: the 404 page, not a database error on PostgreSQL.
    for (const what of ['variables', 'triggers']) {
      assert.equal((await postForm(t, `${settings}/${what}/9999999999/delete`, { authenticity_token: token }, { cookie })).statusCode, 404);
    }
  });

  it('streams a 4 MiB log', async () => {
    const job = await (async () => {
      await createPipeline(t, p);
      let j: JobPayload | null;
      while ((j = await runner.request()) && j.job_info.name !== 'build') await runner.update(j, 'success');
      return j!;
    })();
    const line = `${'x'.repeat(1000)}\n`;
    const chunk = line.repeat(1024);
    for (let i = 0; i < 4; i++) assert.equal((await runner.appendTrace(job, chunk)).statusCode, 202);
    await runner.appendTrace(job, 'the end\n');
    await runner.update(job, 'success');
    const res = await get(`${base()}/-/jobs/${job.id}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], undefined, 'sent in parts, not built whole');
    // The last 48 KiB from their first whole line (jobs.ts MAX_PAGE_LOG): 49 lines of 1001 bytes, then the end.
    assert.match(res.body, /<span class="ln">50<\/span>the end<\/div>/);
    assert.match(res.body, /id="log-cut">— showing the last 48 KiB of the log/);
    assert.ok(res.body.length < 150 * 1024, `the page is ${res.body.length} bytes`);
  });

  it('shows a running job\'s log growing in a real browser, accessibly', { skip: !hasChromium() }, async () => {
    const pipeline = await createPipeline(t, p);
    let job: JobPayload | null;
    while ((job = await runner.request()) && job.job_info.name !== 'build') await runner.update(job, 'success');
    assert.ok(job);
    await runner.appendTrace(job, '\x1b[0Ksection_start:1700000003:setup\r\x1b[0KSetting up\ninside the section\n');
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, p.owner);
      const page = await openPage(browser.context);
      await page.goto(`${t.url}/${p.fullPath}/-/jobs/${job.id}`);
      await page.waitForSelector('text=inside the section');
      await assertAccessible(page);
      await runner.appendTrace(job, '\x1b[32mcompiled while you watched\x1b[0m\n');
      await page.waitForSelector('.ansi-green-fg:has-text("compiled while you watched")', { timeout: 15_000 });
      // Folding the section hides its lines.
      await page.click('.section-header[data-section="setup"]');
      assert.equal(await page.isHidden('text=inside the section'), true);
      await runner.update(job, 'success');
      await page.waitForSelector('text=The job finished: passed.', { timeout: 15_000 });
      await screenshot(page, 'ci-job-live-log');
      await page.goto(`${t.url}/${p.fullPath}/-/pipelines/${pipeline.id}`);
      await assertAccessible(page);
      await screenshot(page, 'ci-pipeline-graph');
      await page.goto(`${t.url}/${p.fullPath}/-/pipelines`);
      await assertAccessible(page);
      await page.goto(`${t.url}/${p.fullPath}/-/settings/ci_cd`);
      await assertAccessible(page);
      await screenshot(page, 'ci-settings');
      await page.goto(`${t.url}/${p.fullPath}/-/ci/lint`);
      await page.fill('#lint-content', CI);
      await page.click('button:has-text("Validate")');
      await page.waitForSelector('text=Syntax is correct.');
      await assertAccessible(page);
      assertCleanConsole(page);
    } finally {
      await browser.close();
    }
    // The token API still answers for the same job (nothing the page did changed it).
    const token = await createToken(t.db, p.owner, { scopes: ['api'] });
    const api = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}`, token });
    assert.equal(api.statusCode, 200);
  });
});
