/**
 * Bulk repository storage moves (spec, Bulk repository storage moves; reference §4): a shard
 * holding projects, snippets and group wikis with real commits is emptied onto another shard;
 * every move finishes, nothing is left on the source, and every repository clones from its new
 * shard with every ref identical. New repositories follow the storage weights.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { cloneRefs, exists, fillRepository, makeShards, refs, waitFor, type Shards } from '../helpers/storage-shards.ts';

let t: TestApp;
let shards: Shards;

before(async () => {
  shards = await makeShards(['default', 'b']);
  t = await startTestApp({ KILN_STORAGES: shards.env, KILN_JOB_POLL_MS: '50' });
});
after(async () => {
  await t.close();
  await shards.remove();
});

const root = { token: ROOT_TOKEN };

async function post(url: string, payload: object) {
  return t.request({ method: 'POST', url: `/api/v4${url}`, payload, ...root });
}

async function get(url: string) {
  return t.request({ method: 'GET', url: `/api/v4${url}`, ...root });
}

test('a bulk move empties the source shard of projects, snippets and group wikis, refs intact', async () => {
  const containers: { kind: string; id: number; diskPath: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await post('/projects', { name: `bulk project ${i}`, path: `bulk-project-${i}` });
    assert.equal(r.statusCode, 201, r.body);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
    containers.push({ kind: 'project', id: row.id, diskPath: row.disk_path });
  }
  for (let i = 0; i < 2; i++) {
    const r = await post('/snippets', { title: `snippet ${i}`, file_name: 'a.txt', content: `content ${i}` });
    assert.equal(r.statusCode, 201, r.body);
    const row = await t.db.selectFrom('snippets').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
    containers.push({ kind: 'snippet', id: row.id, diskPath: row.disk_path });
  }
  for (let i = 0; i < 2; i++) {
    const r = await post('/groups', { name: `bulk group ${i}`, path: `bulk-group-${i}` });
    assert.equal(r.statusCode, 201, r.body);
    const row = await t.db.selectFrom('namespaces').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
    containers.push({ kind: 'group', id: row.id, diskPath: row.wiki_disk_path! });
  }
  const before = new Map<string, string>();
  for (const c of containers) {
    const repo = path.join(shards.dirs.default, c.diskPath);
    await fillRepository(repo, `${c.kind}${c.id}`);
    before.set(`${c.kind}${c.id}`, refs(repo));
  }

  // The spec: steer new repositories to the new storage first, through the weights.
  const weights = await t.request({ method: 'PUT', url: '/api/v4/application/settings', payload: { repository_storages_weighted: { default: 0, b: 100 } }, ...root });
  assert.equal(weights.statusCode, 200, weights.body);

  for (const kind of ['project', 'snippet']) {
    const r = await post(`/${kind}_repository_storage_moves`, { source_storage_name: 'default', destination_storage_name: 'b' });
    assert.equal(r.statusCode, 202, r.body);
    assert.deepEqual(r.json(), { message: '202 Accepted' });
  }
  // No destination: each group goes where the weights say (b).
  const groups = await post('/group_repository_storage_moves', { source_storage_name: 'default' });
  assert.equal(groups.statusCode, 202, groups.body);

  for (const kind of ['project', 'snippet', 'group']) {
    const expected = containers.filter((c) => c.kind === kind).length;
    const moves = await waitFor(`${kind} moves to finish`, async () => {
      const r = await get(`/${kind}_repository_storage_moves?per_page=100`);
      const list = r.json() as { state: string }[];
      return list.length === expected && list.every((m) => m.state === 'finished') ? list : undefined;
    });
    for (const m of moves as unknown as Record<string, any>[]) {
      assert.equal(m.source_storage_name, 'default');
      assert.equal(m.destination_storage_name, 'b');
      assert.equal(m.error_message, null);
      assert.equal(typeof m[kind].id, 'number');
    }
  }

  // GET /projects?repository_storage=… reflects the moves (spec).
  assert.deepEqual((await get('/projects?repository_storage=default')).json(), []);
  assert.equal((await get('/projects?repository_storage=b')).json().length, 3);
  for (const c of containers) {
    assert.equal(await exists(path.join(shards.dirs.default, c.diskPath)), false, `${c.kind} ${c.id} left on the source`);
    const moved = path.join(shards.dirs.b, c.diskPath);
    assert.equal(await cloneRefs(moved), before.get(`${c.kind}${c.id}`), `${c.kind} ${c.id} refs differ after the move`);
  }
  for (const table of ['projects', 'snippets'] as const) {
    const rows = await t.db.selectFrom(table).select(['repository_storage', 'read_only']).execute();
    assert.ok(rows.every((r) => r.repository_storage === 'b' && r.read_only === 0));
  }
  const wikis = await t.db.selectFrom('namespaces').select(['repository_storage', 'read_only']).where('kind', '=', 'group').execute();
  assert.ok(wikis.every((r) => r.repository_storage === 'b' && r.read_only === 0));
  assert.equal(await exists(path.join(shards.dirs.b, '.kiln-moves', 'project-1.git')), false);

  // Administrators see the shard on the records.
  const project = await get(`/projects/${containers[0].id}`);
  assert.equal(project.json().repository_storage, 'b');
  const group = await get(`/groups/${containers.find((c) => c.kind === 'group')!.id}`);
  assert.equal(group.json().repository_storage, 'b');

  // New repositories follow the weights.
  const fresh = await post('/projects', { name: 'after the move', path: 'after-the-move' });
  assert.equal(fresh.json().repository_storage, 'b');

  // A second bulk request for the emptied shard schedules nothing.
  assert.equal((await post('/project_repository_storage_moves', { source_storage_name: 'default', destination_storage_name: 'b' })).statusCode, 202);
  await waitFor('the bulk job', async () => (await t.db.selectFrom('background_jobs').select('id').execute()).length === 0 ? true : undefined);
  assert.equal((await get('/project_repository_storage_moves')).json().length, 3);
});
