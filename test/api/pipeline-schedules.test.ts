/**
 * Pipeline schedules (issue 31, item 7): CRUD with the Service's validation texts and roles,
 * take_ownership, schedule variables, play (rate limited), and the scheduler: a due schedule makes
 * exactly one pipeline with source `schedule` even when two processes tick at once, catches up
 * once after downtime, reads its cron in its time zone, and its variables reach the jobs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startPeerApp, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { waitFor } from '../helpers/storage-shards.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { claimRun, runSchedule, scheduleDueRuns, RUN_SCHEDULE_JOB } from '../../src/domain/pipeline-schedules/run-schedule.ts';
import { ciEnvFrom } from '../../src/domain/pipelines/ci-env.ts';
import { findSchedule } from '../../src/domain/pipeline-schedules/pipeline-schedules.queries.ts';

const CONFIG = `
scheduled:
  script: echo $SCHED_VAR
  only: [schedules]
by-rule:
  script: echo rule
  rules:
    - if: '$CI_PIPELINE_SOURCE == "schedule" && $SCHED_VAR == "hello"'
not-scheduled:
  script: echo push
  except: [schedules]
`;

describe('pipeline schedules', () => {
  let t: TestApp;
  let p: CiProject;
  const tokens: Record<'maintainer' | 'developer' | 'reporter' | 'guest', string> = { maintainer: '', developer: '', reporter: '', guest: '' };
  const ids: Record<string, number> = {};
  let runner: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'feature.txt': 'x' }, { branch: 'feature' });
    for (const [role, level] of [['maintainer', 40], ['developer', 30], ['reporter', 20], ['guest', 10]] as const) {
      const u = await createUser(t.db);
      ids[role] = u.id;
      tokens[role] = await createToken(t.db, u, { scopes: ['api'] });
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: u.id, access_level: level } });
      assert.equal(res.statusCode, 201, res.body);
    }
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });

  const base = () => `/api/v4/projects/${p.project.id}/pipeline_schedules`;
  const create = async (token: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: base(), token, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const settle = () => waitFor('schedule runs', async () => {
    const dead = await t.db.selectFrom('background_jobs').select('last_error').where('state', '=', 'dead').execute();
    assert.deepEqual(dead, []);
    const left = await t.db.selectFrom('background_jobs').select('id').where('kind', '=', RUN_SCHEDULE_JOB).where('state', '!=', 'dead').execute();
    return left.length === 0 ? true : undefined;
  }, 30_000);
  const schedulePipelines = (id: number) => t.db.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', id).orderBy('id').execute();

  it('creates, shows, lists, changes and deletes schedules with the Service’s fields and texts', async () => {
    const created = await create(tokens.developer, { description: 'nightly', ref: 'feature', cron: ' 0 9 * * * ', cron_timezone: 'Asia/Tokyo' });
    assert.deepEqual(Object.keys(created), [
      'id', 'description', 'ref', 'cron', 'cron_timezone', 'next_run_at', 'active', 'created_at', 'updated_at', 'owner', 'last_pipeline', 'variables',
    ]);
    assert.equal(created.cron, '0 9 * * *');
    assert.equal(created.active, true);
    assert.equal(created.owner.id, ids.developer);
    assert.equal(created.last_pipeline, null);
    assert.deepEqual(created.variables, []);
    // 09:00 in Tokyo is 00:00 UTC, within the next day.
    assert.match(created.next_run_at, /T00:00:00\.000Z$/);
    const next = Date.parse(created.next_run_at);
    assert.ok(next > Date.now() && next <= Date.now() + 86_400_000);

    const friendly = await create(tokens.developer, { description: 'west', ref: 'feature', cron: '30 6 * * 1', cron_timezone: 'Pacific Time (US & Canada)', active: false });
    assert.equal(friendly.active, false);
    assert.equal(new Date(friendly.next_run_at).getUTCDay() === 1 || new Date(friendly.next_run_at).getUTCDay() === 2, true);
    assert.equal(await create(tokens.developer, { description: 'utc', ref: 'feature', cron: '@daily' }).then((s) => s.cron_timezone), 'UTC');

    let res = await t.request({ method: 'POST', url: base(), token: tokens.developer, payload: { description: 'x', ref: 'feature', cron: '61 * * * *', cron_timezone: 'Mars/Olympus' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { cron: [' is invalid syntax'], cron_timezone: [' is invalid syntax'] } }]);
    res = await t.request({ method: 'POST', url: base(), token: tokens.developer, payload: { description: ' ', ref: 'feature', cron: '* * * * *', cron_timezone: 'asia/tokyo' } });
    assert.deepEqual(res.json(), { message: { cron_timezone: [' is invalid syntax'], description: ["can't be blank"] } });
    res = await t.request({ method: 'POST', url: base(), token: tokens.developer, payload: { description: 'x', ref: '', cron: '* * * * *' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'ref is empty' }]);
    res = await t.request({ method: 'POST', url: base(), token: tokens.developer, payload: { ref: 'main', cron: '* * * * *' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "description" not given' }]);
    res = await t.request({ method: 'POST', url: base(), token: tokens.reporter, payload: { description: 'x', ref: 'feature', cron: '* * * * *' } });
    assert.equal(res.statusCode, 403);

    // Reading: Reporters list and show (without the variables); Guests of a private project do not.
    res = await t.request({ method: 'GET', url: `${base()}?scope=inactive`, token: tokens.reporter });
    assert.deepEqual(res.json().map((s: { id: number }) => s.id), [friendly.id]);
    res = await t.request({ method: 'GET', url: `${base()}?scope=active`, token: tokens.reporter });
    assert.ok(res.json().every((s: { active: boolean }) => s.active));
    assert.ok(!('last_pipeline' in res.json()[0]));
    res = await t.request({ method: 'GET', url: `${base()}/${created.id}`, token: tokens.reporter });
    assert.equal(res.statusCode, 200);
    assert.ok(!('variables' in res.json()));
    res = await t.request({ method: 'GET', url: base(), token: tokens.guest });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'GET', url: `${base()}/${created.id}`, token: tokens.guest });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Pipeline Schedule Not Found' }]);
    res = await t.request({ method: 'GET', url: `${base()}/2147483648`, token: tokens.developer });
    assert.equal(res.statusCode, 404);

    // Changing is the owner's (or an administrator's): a Maintainer takes ownership first.
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: tokens.maintainer, payload: { description: 'mine' } });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: tokens.developer, payload: { cron: '15 3 * * *', cron_timezone: 'UTC' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.json().next_run_at, /T03:15:00\.000Z$/);
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: tokens.developer, payload: { cron: 'nope' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { cron: [' is invalid syntax'] } }]);
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: ROOT_TOKEN, payload: { description: 'by admin' } });
    assert.deepEqual([res.statusCode, res.json().description, res.json().owner.id], [200, 'by admin', ids.developer]);

    // take_ownership: admin_pipeline_schedule (Maintainers, the owner) and not the owner already.
    res = await t.request({ method: 'POST', url: `${base()}/${created.id}/take_ownership`, token: tokens.developer });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url: `${base()}/${friendly.id}/take_ownership`, token: tokens.reporter });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url: `${base()}/${created.id}/take_ownership`, token: tokens.maintainer });
    assert.deepEqual([res.statusCode, res.json().owner.id], [201, ids.maintainer]);
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: tokens.developer, payload: { description: 'no longer mine' } });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'PUT', url: `${base()}/${created.id}`, token: tokens.maintainer, payload: { description: 'mine', active: false } });
    assert.deepEqual([res.statusCode, res.json().active], [200, false]);

    // Deleting: Maintainers, or the owner while a Developer.
    res = await t.request({ method: 'DELETE', url: `${base()}/${friendly.id}`, token: tokens.reporter });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'DELETE', url: `${base()}/${friendly.id}`, token: tokens.developer });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'DELETE', url: `${base()}/${created.id}`, token: tokens.maintainer });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'GET', url: `${base()}/${created.id}`, token: tokens.maintainer });
    assert.equal(res.statusCode, 404);
  });

  it('keeps schedule variables per schedule, sealed, with the Service’s texts and roles', async () => {
    const s = await create(tokens.developer, { description: 'vars', ref: 'feature', cron: '0 0 1 1 *' });
    const vars = `${base()}/${s.id}/variables`;
    let res = await t.request({ method: 'POST', url: vars, token: tokens.developer, payload: { key: 'DEPLOY_TO', value: 'staging-secret' } });
    assert.deepEqual([res.statusCode, res.json()], [201, { variable_type: 'env_var', key: 'DEPLOY_TO', value: 'staging-secret' }]);
    const row = await t.db.selectFrom('ci_pipeline_schedule_variables').selectAll().where('pipeline_schedule_id', '=', s.id).executeTakeFirstOrThrow();
    assert.ok(!row.encrypted_value.includes('staging-secret'));
    res = await t.request({ method: 'POST', url: vars, token: tokens.developer, payload: { key: 'DEPLOY_TO', value: 'again' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { key: ['has already been taken'] } }]);
    res = await t.request({ method: 'POST', url: vars, token: tokens.developer, payload: { key: 'BAD-KEY', value: 'x' } });
    assert.deepEqual(res.json(), { message: { key: ["can contain only letters, digits and '_'."] } });
    res = await t.request({ method: 'POST', url: vars, token: tokens.developer, payload: { key: 'X', value: 'x', variable_type: 'blob' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'variable_type does not have a valid value' }]);
    // Others than the owner (administrators aside) do not change them; Maintainers read them.
    res = await t.request({ method: 'POST', url: vars, token: tokens.maintainer, payload: { key: 'OTHER', value: 'x' } });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'GET', url: `${vars}/DEPLOY_TO`, token: tokens.maintainer });
    assert.deepEqual(res.json(), { variable_type: 'env_var', key: 'DEPLOY_TO', value: 'staging-secret' });
    res = await t.request({ method: 'GET', url: `${vars}/DEPLOY_TO`, token: tokens.reporter });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'PUT', url: `${vars}/DEPLOY_TO`, token: tokens.developer, payload: { value: 'prod', variable_type: 'file' } });
    assert.deepEqual([res.statusCode, res.json()], [200, { variable_type: 'file', key: 'DEPLOY_TO', value: 'prod' }]);
    res = await t.request({ method: 'PUT', url: `${vars}/MISSING`, token: tokens.developer, payload: { value: 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Pipeline Schedule Variable Not Found' }]);
    res = await t.request({ method: 'GET', url: `${base()}/${s.id}`, token: tokens.maintainer });
    assert.deepEqual(res.json().variables, [{ variable_type: 'file', key: 'DEPLOY_TO', value: 'prod' }]);
    res = await t.request({ method: 'DELETE', url: `${vars}/DEPLOY_TO`, token: tokens.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [202, { variable_type: 'file', key: 'DEPLOY_TO', value: 'prod' }]);
    res = await t.request({ method: 'GET', url: `${vars}/DEPLOY_TO`, token: tokens.developer });
    assert.equal(res.statusCode, 404);
  });

  it('runs a due schedule exactly once even when two processes tick at the same moment', async () => {
    const s = await create(tokens.developer, { description: 'race', ref: 'feature', cron: '*/5 * * * *' });
    await t.request({ method: 'POST', url: `${base()}/${s.id}/variables`, token: tokens.developer, payload: { key: 'SCHED_VAR', value: 'hello' } });
    const past = new Date(Date.now() - 60_000).toISOString();
    await t.db.updateTable('ci_pipeline_schedules').set({ next_run_at: past }).where('id', '=', s.id).execute();
    const peer = await startPeerApp(t);
    try {
      const now = new Date();
      // Both processes read the schedule as due, then both try to claim that run: one wins.
      const seen = (await findSchedule(t.db, s.id))!;
      const claims = t.dialect === 'postgres'
        ? await Promise.all([claimRun(t.db, t.app.jobs, seen, now), claimRun(peer.db, peer.app.jobs, seen, now)])
        // One process's handles on one SQLite file: a second transaction would wait for the lock
        // synchronously, stopping the first; the processes of KILN_WORKERS do not share a thread.
        : [await claimRun(t.db, t.app.jobs, seen, now), await claimRun(peer.db, peer.app.jobs, seen, now)];
      assert.deepEqual(claims.sort(), [false, true]);
      if (t.dialect === 'postgres') {
        // Whole ticks at the same moment, on a second due schedule.
        const other = await create(tokens.developer, { description: 'race 2', ref: 'feature', cron: '*/5 * * * *' });
        await t.db.updateTable('ci_pipeline_schedules').set({ next_run_at: past }).where('id', '=', other.id).execute();
        const ticks = await Promise.all([scheduleDueRuns(t.db, t.app.jobs, now), scheduleDueRuns(peer.db, peer.app.jobs, now)]);
        assert.equal(ticks[0] + ticks[1], 1, `ticks ${ticks}`);
        await waitFor('the second scheduled pipeline', async () => ((await schedulePipelines(other.id)).length > 0 ? true : undefined), 30_000);
        await settle();
        assert.equal((await schedulePipelines(other.id)).length, 1);
        await t.request({ method: 'DELETE', url: `${base()}/${other.id}`, token: tokens.developer });
      }
      await waitFor('the scheduled pipeline', async () => ((await schedulePipelines(s.id)).length > 0 ? true : undefined), 30_000);
      await settle();
    } finally {
      await peer.close();
    }
    const pipelines = await schedulePipelines(s.id);
    assert.equal(pipelines.length, 1);
    assert.deepEqual([pipelines[0].source, pipelines[0].ref, pipelines[0].user_id], ['schedule', 'feature', ids.developer]);
    const row = await t.db.selectFrom('ci_pipeline_schedules').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.ok(Date.parse(row.next_run_at!) > Date.now());
    assert.equal(new Date(row.next_run_at!).getUTCMinutes() % 5, 0);
    // A later tick finds nothing due.
    assert.equal(await scheduleDueRuns(t.db, t.app.jobs), 0);

    // only/except: schedules and rules on the source and the schedule's variables chose the jobs.
    const jobs = await t.db.selectFrom('ci_builds').select('name').where('pipeline_id', '=', pipelines[0].id).orderBy('name').execute();
    assert.deepEqual(jobs.map((j) => j.name), ['by-rule', 'scheduled']);
    // The schedule's variables reach the job, with CI_PIPELINE_SOURCE.
    // (On PostgreSQL the second schedule's pipeline has jobs too: take this pipeline's.)
    let job = await runner.requestJob();
    for (let i = 0; i < 4; i++) {
      const build = await t.db.selectFrom('ci_builds').select('pipeline_id').where('id', '=', job.id).executeTakeFirstOrThrow();
      if (build.pipeline_id === pipelines[0].id) break;
      job = await runner.requestJob();
    }
    const vars = Object.fromEntries(job.variables.map((v) => [v.key, v.value]));
    assert.equal(vars.SCHED_VAR, 'hello');
    assert.equal(vars.CI_PIPELINE_SOURCE, 'schedule');

    // The schedule lists its pipelines and shows the last one.
    let res = await t.request({ method: 'GET', url: `${base()}/${s.id}/pipelines`, token: tokens.reporter });
    assert.deepEqual(res.json().map((x: { id: number; source: string }) => [x.id, x.source]), [[pipelines[0].id, 'schedule']]);
    res = await t.request({ method: 'GET', url: `${base()}/${s.id}`, token: tokens.developer });
    assert.equal(res.json().last_pipeline.id, pipelines[0].id);
    // Deleting the schedule keeps its pipelines.
    res = await t.request({ method: 'DELETE', url: `${base()}/${s.id}`, token: tokens.developer });
    assert.equal(res.statusCode, 204);
    const kept = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', pipelines[0].id).executeTakeFirstOrThrow();
    assert.equal(kept.pipeline_schedule_id, null);
  });

  it('catches up at most once after downtime, and leaves inactive schedules alone', async () => {
    const s = await create(tokens.developer, { description: 'catch-up', ref: 'feature', cron: '* * * * *' });
    const idle = await create(tokens.developer, { description: 'idle', ref: 'feature', cron: '* * * * *', active: false });
    const daysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
    await t.db.updateTable('ci_pipeline_schedules').set({ next_run_at: daysAgo }).where('id', 'in', [s.id, idle.id]).execute();
    const now = new Date();
    assert.equal(await scheduleDueRuns(t.db, t.app.jobs, now), 1);
    assert.equal(await scheduleDueRuns(t.db, t.app.jobs, now), 0);
    await settle();
    assert.equal((await schedulePipelines(s.id)).length, 1);
    assert.equal((await schedulePipelines(idle.id)).length, 0);
    const row = await t.db.selectFrom('ci_pipeline_schedules').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.ok(Date.parse(row.next_run_at!) > now.getTime() && Date.parse(row.next_run_at!) <= now.getTime() + 60_000);
    // A run job taken over after its worker died (a second attempt) finds the pipeline made and makes none.
    const env = ciEnvFrom(t.db, t.config);
    const again = await runSchedule(env, { scheduleId: s.id, userId: ids.developer, queuedAt: now.toISOString() }, 2);
    assert.deepEqual(again, { skipped: 'already created' });
    assert.equal((await schedulePipelines(s.id)).length, 1);
    // A run as someone who may no longer create pipelines makes none.
    const outcome = await runSchedule(env, { scheduleId: s.id, userId: ids.reporter, queuedAt: now.toISOString() }, 1);
    assert.deepEqual(outcome, { skipped: 'Insufficient permissions to create a new pipeline' });
  });

  it('plays a schedule as the caller once a minute, on refs the caller may update', async () => {
    const onMain = await create(tokens.maintainer, { description: 'main', ref: 'main', cron: '0 0 1 1 *' });
    const onFeature = await create(tokens.developer, { description: 'feature', ref: 'feature', cron: '0 0 1 1 *' });
    // main is protected: a Developer may not update it, so may not play its schedule.
    let res = await t.request({ method: 'POST', url: `${base()}/${onMain.id}/play`, token: tokens.developer });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url: `${base()}/${onFeature.id}/play`, token: tokens.reporter });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'POST', url: `${base()}/${onFeature.id}/play`, token: tokens.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [201, { message: '201 Created' }]);
    res = await t.request({ method: 'POST', url: `${base()}/${onFeature.id}/play`, token: tokens.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }]);
    assert.equal(res.headers['retry-after'], '60');
    // The limit is per user and schedule.
    res = await t.request({ method: 'POST', url: `${base()}/${onFeature.id}/play`, token: tokens.developer });
    assert.equal(res.statusCode, 201);
    res = await t.request({ method: 'POST', url: `${base()}/${onMain.id}/play`, token: tokens.maintainer });
    assert.equal(res.statusCode, 201);
    await settle();
    const played = await schedulePipelines(onFeature.id);
    assert.deepEqual(played.map((x) => x.user_id).sort(), [ids.maintainer, ids.developer].sort());
    assert.ok(played.every((x) => x.source === 'schedule'));
    assert.equal((await schedulePipelines(onMain.id)).length, 1);
    // Playing leaves the next run as it was.
    const row = await t.db.selectFrom('ci_pipeline_schedules').selectAll().where('id', '=', onFeature.id).executeTakeFirstOrThrow();
    assert.equal(row.next_run_at, onFeature.next_run_at);
    // A minute later the same user may play it again.
    await t.db.updateTable('ci_pipeline_schedule_plays').set({ played_at: new Date(Date.now() - 61_000).toISOString() })
      .where('pipeline_schedule_id', '=', onFeature.id).execute();
    res = await t.request({ method: 'POST', url: `${base()}/${onFeature.id}/play`, token: tokens.maintainer });
    assert.equal(res.statusCode, 201);
    await settle();
  });
});
