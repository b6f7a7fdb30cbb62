/**
 * Migrations 2026-12-01T0100 and 0110 on a database with real rows: the fork networks are filled
 * from the project_forks chains that exist (a chain's top is its network's root; a top that is a
 * fork whose source is gone gives a network without a root), and both migrations are undone and
 * done again (the open-request index back to one per source branch, the network tables gone).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, type Migration } from 'kysely/migration';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');
const FIRST = '2026-12-01T0100_merge_requests_open_branch_pair';

async function migrator(t: TestApp): Promise<Migrator> {
  const files = (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).sort();
  const migrations: Record<string, Migration> = {};
  for (const f of files) migrations[f.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(MIGRATIONS, f)).href);
  return new Migrator({ db: t.db, provider: { getMigrations: async () => migrations } });
}

describe('fork networks migration', () => {
  let t: TestApp;

  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('makes one network per forked_from chain, a rootless one for the forks of a deleted source', async () => {
    const create = async (name: string) => {
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name } });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { id: number }).id;
    };
    const [root, a, b, orphan, orphanFork, alone] = [
      await create('mig-root'), await create('mig-a'), await create('mig-b'), await create('mig-orphan'),
      await create('mig-orphan-fork'), await create('mig-alone'),
    ];

    const files = (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
    const down = await migrator(t).then((m) => m.migrateTo(files[files.indexOf(FIRST) - 1]));
    assert.equal(down.error, undefined);
    // The chains as the fork code of before kept them: root ← a ← b, and a fork whose source was deleted.
    const now = new Date().toISOString();
    await t.db.insertInto('project_forks').values([
      { project_id: a, forked_from_project_id: root, created_at: now },
      { project_id: b, forked_from_project_id: a, created_at: now },
      { project_id: orphan, forked_from_project_id: null, created_at: now },
      { project_id: orphanFork, forked_from_project_id: orphan, created_at: now },
    ]).execute();

    await migrateToLatest(t.db);
    const members = await t.db.selectFrom('fork_network_members')
      .innerJoin('fork_networks', 'fork_networks.id', 'fork_network_members.fork_network_id')
      .select(['fork_network_members.project_id', 'fork_network_members.fork_network_id', 'fork_networks.root_project_id'])
      .execute();
    const of = (id: number) => members.find((m) => m.project_id === id);
    assert.equal(members.length, 5);
    assert.equal(of(alone), undefined);
    assert.equal(of(a)!.fork_network_id, of(root)!.fork_network_id);
    assert.equal(of(b)!.fork_network_id, of(root)!.fork_network_id);
    assert.equal(of(root)!.root_project_id, root);
    assert.equal(of(orphanFork)!.fork_network_id, of(orphan)!.fork_network_id);
    assert.notEqual(of(orphan)!.fork_network_id, of(root)!.fork_network_id);
    assert.equal(of(orphan)!.root_project_id, null);
    assert.equal((await t.db.selectFrom('fork_networks').select('id').execute()).length, 2);
  });
});
