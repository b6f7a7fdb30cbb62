/**
 * Migration 2026-11-26T1700 on pipelines that already exist (issue 35, item 3): a finished one
 * gets the duration the Service would have stored (the union of its latest builds' running
 * periods, in whole seconds), and one stamped started_at though no job of it ever started loses
 * the stamp. The migrations below it are undone and done again on a database with real rows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, type Migration } from 'kysely/migration';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');
/** The last migration before the pipeline clock's. */
const BEFORE = '2026-11-25T0100_users_id_index';

async function migrator(t: TestApp): Promise<Migrator> {
  const files = (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).sort();
  const migrations: Record<string, Migration> = {};
  for (const f of files) migrations[f.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(MIGRATIONS, f)).href);
  return new Migrator({ db: t.db, provider: { getMigrations: async () => migrations } });
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('pipeline clock migration', () => {
  let t: TestApp;
  let p: CiProject;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'a:\n  stage: build\n  script: x\nb:\n  stage: test\n  script: x\n' });
  });
  after(async () => { await t.close(); });

  it('stores finished pipelines\' durations from their builds and drops starts no job made', async () => {
    const runner = await TestRunner.register(t);
    const ran = (await createPipeline(t, p)).id;
    await runner.run();
    await runner.run();
    const neverRan = (await createPipeline(t, p)).id;
    const cancelUrl = `/api/v4/projects/${p.project.id}/pipelines/${neverRan}/cancel`;
    const cancel = await t.request({ method: 'POST', url: cancelUrl, token: p.ownerToken });
    assert.equal(cancel.statusCode, 200, cancel.body);

    const down = await migrator(t).then((m) => m.migrateTo(BEFORE));
    assert.equal(down.error, undefined);
    // What kiln stored before: a start for the canceled pipeline; jobs with known periods
    // (a: 0–10.4 s, b: 60–63.9 s after a base), the pipeline spanning both.
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const [a, b] = await t.db.selectFrom('ci_builds').select(['id', 'name']).where('pipeline_id', '=', ran).orderBy('stage_idx').execute();
    const ranFor = (id: number, from: number, to: number) =>
      t.db.updateTable('ci_builds').set({ started_at: iso(base + from), finished_at: iso(base + to) }).where('id', '=', id).execute();
    await ranFor(a.id, 0, 10_400);
    await ranFor(b.id, 60_000, 63_900);
    await t.db.updateTable('ci_pipelines').set({ started_at: iso(base), finished_at: iso(base + 63_900) }).where('id', '=', ran).execute();
    await t.db.updateTable('ci_pipelines').set({ started_at: iso(base) }).where('id', '=', neverRan).execute();

    await migrateToLatest(t.db);
    const rows = await t.db.selectFrom('ci_pipelines').select(['id', 'started_at', 'duration'])
      .where('id', 'in', [ran, neverRan]).orderBy('id').execute();
    // 10.4 + 3.9 s of running, the 49.6 s between the stages not counted: 14.
    assert.deepEqual(rows, [{ id: ran, started_at: iso(base), duration: 14 }, { id: neverRan, started_at: null, duration: null }]);
    const shown = await t.request({ url: `/api/v4/projects/${p.project.id}/pipelines/${ran}`, token: p.ownerToken });
    assert.equal(shown.json().duration, 14);
  });
});
