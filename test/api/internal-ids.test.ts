/**
 * Internal ids (issue 35, item 1): a project's pipeline `iid`s come from one counter row per
 * (project, usage) advanced inside the creating transaction, as the Service's `internal_ids` do,
 * so pipelines created at the same moment by API calls and by git pushes over smart HTTP never
 * collide (on PostgreSQL they did: both read max(iid) + 1 and the second insert broke the unique
 * index, a 500), and a deleted pipeline's iid is never given again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { pushClone, waitForPipelines, type PushClone } from '../helpers/ci-push.ts';
import * as internalIdsMigration from '../../src/db/migrations/2026-11-26T1700_internal_ids.ts';

const CI_YAML = 'build:\n  script: make\n';
const PUSHES = 5;
const BRANCHES_PER_PUSH = 5;
const API_CALLS = 25;

interface Listed { id: number; iid: number; ref: string; source: string }

describe('internal ids', () => {
  let t: ListeningTestApp;
  const clones: PushClone[] = [];
  // Errors the server logs: a push's pipelines are created after its answer, so a failure there
  // shows only in the log (and in a missing pipeline).
  const errors: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      if ((JSON.parse(line) as { level: number }).level >= 50) errors.push(line);
    }
  });

  before(async () => { t = await startListeningApp({ LOG_LEVEL: 'error' }, { logStream: stream }); });
  after(async () => {
    for (const c of clones) await c.remove();
    await t.close();
  });

  const list = async (p: CiProject): Promise<Listed[]> => {
    const url = `/api/v4/projects/${p.project.id}/pipelines?per_page=100&sort=asc`;
    const res = await t.request({ method: 'GET', url, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Listed[];
  };
  const createViaApi = (p: CiProject) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });

  it('gives 50 pipelines created at once by API calls and pushes 50 distinct iids, without a 5xx', async () => {
    const p = await createCiProject(t);
    const seed = await pushClone(t.url, p);
    clones.push(seed);
    await seed.commitAndPush({ '.gitlab-ci.yml': CI_YAML });
    await waitForPipelines(t, p, 1);
    // Each push comes from its own clone and creates BRANCHES_PER_PUSH new branches, each a push pipeline.
    const pushers: PushClone[] = [];
    for (let i = 0; i < PUSHES; i++) {
      const c = await pushClone(t.url, p);
      clones.push(c);
      await c.run(['fetch', '--quiet', 'origin', 'main']);
      pushers.push(c);
    }
    const pushes = pushers.map((c, i) => c.run(['push', '--quiet', 'origin',
      ...Array.from({ length: BRANCHES_PER_PUSH }, (_, j) => `FETCH_HEAD:refs/heads/race-${i}-${j}`)]));
    const calls = Array.from({ length: API_CALLS }, () => createViaApi(p));
    const [answers] = await Promise.all([Promise.all(calls), Promise.all(pushes)]);
    assert.deepEqual(answers.filter((r) => r.statusCode !== 201).map((r) => `${r.statusCode} ${r.body}`), []);

    const total = 1 + PUSHES * BRANCHES_PER_PUSH + API_CALLS;
    const pipelines = await waitForPipelines(t, p, total, 60_000) as unknown as Listed[];
    // Give a late push pipeline the time to show up as one too many.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const all = await list(p);
    assert.equal(all.length, total);
    assert.equal(pipelines.length, total);
    assert.equal(all.filter((x) => x.source === 'api').length, API_CALLS);
    assert.equal(all.filter((x) => x.source === 'push' && x.ref.startsWith('race-')).length, PUSHES * BRANCHES_PER_PUSH);
    // Distinct, and with no gap: every allocation committed with its pipeline.
    assert.deepEqual(all.map((x) => x.iid).sort((a, b) => a - b), Array.from({ length: total }, (_, i) => i + 1));
    // The answers carry the iids the rows have.
    const byId = new Map(all.map((x) => [x.id, x.iid]));
    for (const r of answers) {
      const body = r.json() as { id: number; iid: number };
      assert.equal(byId.get(body.id), body.iid);
    }
    assert.deepEqual(errors, []);
  });

  it('numbers pipelines of every source from the one counter: API, push, trigger token, child pipelines', async () => {
    const p = await createCiProject(t);
    const c = await pushClone(t.url, p);
    clones.push(c);
    const config = `${CI_YAML}child:\n  trigger:\n    include: child.yml\n`;
    await c.commitAndPush({ '.gitlab-ci.yml': config, 'child.yml': 'inner: {script: x}\n' });
    await waitForPipelines(t, p, 2);
    const base = `/api/v4/projects/${p.project.id}`;
    const trigger = await t.request({ method: 'POST', url: `${base}/triggers`, token: p.ownerToken, payload: { description: 'ci' } });
    assert.equal(trigger.statusCode, 201, trigger.body);
    const triggerToken = (trigger.json() as { token: string }).token;
    const byTrigger = () => t.request({ method: 'POST', url: `${base}/trigger/pipeline`, payload: { token: triggerToken, ref: 'main' } });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? createViaApi(p) : byTrigger())));
    assert.deepEqual(answers.filter((r) => r.statusCode !== 201).map((r) => `${r.statusCode} ${r.body}`), []);
    // Each of the 11 parents has its child pipeline.
    const all = await waitForPipelines(t, p, 22) as unknown as Listed[];
    const count = (source: string) => all.filter((x) => x.source === source).length;
    assert.deepEqual([count('push'), count('api'), count('trigger'), count('parent_pipeline')], [1, 5, 5, 11]);
    assert.deepEqual(all.map((x) => x.iid).sort((a, b) => a - b), Array.from({ length: 22 }, (_, i) => i + 1));
    assert.deepEqual(errors, []);
  });

  it('never gives a deleted pipeline\'s iid again, even when it was the latest or the only one', async () => {
    const p = await createCiProject(t);
    const seed = await pushClone(t.url, p);
    clones.push(seed);
    await seed.commitAndPush({ '.gitlab-ci.yml': CI_YAML });
    const [pushed] = await waitForPipelines(t, p, 1) as unknown as Listed[];
    const created = async () => {
      const res = await createViaApi(p);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: number; iid: number };
    };
    const remove = async (id: number) => {
      const res = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken });
      assert.equal(res.statusCode, 204, res.body);
    };
    const second = await created();
    assert.equal(second.iid, 2);
    await remove(second.id);
    const third = await created();
    assert.equal(third.iid, 3);
    // With no pipeline left, the count still goes on from the last one given.
    await remove(third.id);
    await remove(pushed.id);
    assert.deepEqual(await list(p), []);
    assert.equal((await created()).iid, 4);
    // A push pipeline takes the next one from the same counter.
    await seed.commitAndPush({ 'a.txt': 'a\n' });
    const after = await waitForPipelines(t, p, 2) as unknown as Listed[];
    assert.deepEqual(after.map((x) => [x.source, x.iid]), [['api', 4], ['push', 5]]);
  });

  it('keeps each project\'s count its own', async () => {
    const a = await createCiProject(t);
    const b = await createCiProject(t);
    for (const p of [a, b]) {
      const c = await pushClone(t.url, p);
      clones.push(c);
      await c.commitAndPush({ '.gitlab-ci.yml': CI_YAML });
      await waitForPipelines(t, p, 1);
    }
    const [ra, rb] = await Promise.all([createViaApi(a), createViaApi(b)]);
    assert.equal(ra.statusCode, 201, ra.body);
    assert.equal(rb.statusCode, 201, rb.body);
    assert.equal((ra.json() as { iid: number }).iid, 2);
    assert.equal((rb.json() as { iid: number }).iid, 2);
  });

  it('starts a project that had pipelines before the counters existed after its greatest iid', async () => {
    const p = await createCiProject(t);
    const c = await pushClone(t.url, p);
    clones.push(c);
    await c.commitAndPush({ '.gitlab-ci.yml': CI_YAML });
    await waitForPipelines(t, p, 1);
    for (let i = 0; i < 2; i++) assert.equal((await createViaApi(p)).statusCode, 201);
    const before = await list(p);
    assert.deepEqual(before.map((x) => x.iid), [1, 2, 3]);
    // The database as it was before migration 2026-11-26T1700, then that migration: the counters
    // are seeded from the pipelines' greatest iids.
    await t.db.schema.dropTable('internal_ids').execute();
    await internalIdsMigration.up(t.db);
    const seeded = await t.db.selectFrom('internal_ids').select(['usage', 'last_value']).where('project_id', '=', p.project.id).execute();
    assert.deepEqual(seeded, [{ usage: 'ci_pipelines', last_value: 3 }]);
    // The latest is deleted: the seeded counter still knows 3 was given.
    const url = `/api/v4/projects/${p.project.id}/pipelines/${before[2].id}`;
    const res = await t.request({ method: 'DELETE', url, token: p.ownerToken });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(((await createViaApi(p)).json() as { iid: number }).iid, 4);
    // A counter lost or behind the rows never gives an iid a pipeline holds: it starts past them.
    await t.db.deleteFrom('internal_ids').where('project_id', '=', p.project.id).execute();
    assert.equal(((await createViaApi(p)).json() as { iid: number }).iid, 5);
    await t.db.updateTable('internal_ids').set({ last_value: 1 }).where('project_id', '=', p.project.id).execute();
    assert.equal(((await createViaApi(p)).json() as { iid: number }).iid, 6);
  });
});
