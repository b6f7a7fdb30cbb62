/**
 * Migration 2026-11-28T1100 on projects that already exist (issue 30, item 3): a project with
 * commits gets its default branch protected with the levels of the default_branch_protection
 * setting (as the Service protected it when the branch came to be); an empty project gets
 * nothing. The migration is undone and done again on a database with real rows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, type Migration } from 'kysely/migration';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { setSetting } from '../../src/domain/settings/settings.ts';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');
const MIGRATION = '2026-11-28T1100_protected_refs';

async function migrator(t: TestApp): Promise<Migrator> {
  const files = (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).sort();
  const migrations: Record<string, Migration> = {};
  for (const f of files) migrations[f.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(MIGRATIONS, f)).href);
  return new Migrator({ db: t.db, provider: { getMigrations: async () => migrations } });
}

describe('protected refs migration', () => {
  let t: TestApp;

  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('protects the default branch of every project with commits, by the setting of the day', async () => {
    const create = async (payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: number };
    };
    const withCommits = await create({ name: 'old-with-commits', initialize_with_readme: true, default_branch: 'trunk' });
    const empty = await create({ name: 'old-empty' });

    const files = (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
    const previous = files[files.indexOf(MIGRATION) - 1];
    const down = await migrator(t).then((m) => m.migrateTo(previous));
    assert.equal(down.error, undefined);
    // Developers may merge (3): push stays the Maintainers', merge becomes the Developers'.
    await setSetting(t.db, 'default_branch_protection', 3);

    await migrateToLatest(t.db);
    const rows = await t.db.selectFrom('protected_branches').selectAll().orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.project_id, r.name, r.allow_force_push]), [[withCommits.id, 'trunk', 0]]);
    const levels = await t.db.selectFrom('protected_branch_access_levels').select(['action', 'access_level']).orderBy('id').execute();
    assert.deepEqual(levels, [{ action: 'push', access_level: 40 }, { action: 'merge', access_level: 30 }]);
    const shown = await t.request({ url: `/api/v4/projects/${withCommits.id}/repository/branches/trunk`, token: ROOT_TOKEN });
    assert.deepEqual([shown.json().protected, shown.json().developers_can_merge], [true, true]);
    const none = await t.request({ url: `/api/v4/projects/${empty.id}/protected_branches`, token: ROOT_TOKEN });
    assert.deepEqual(none.json(), []);
  });
});
