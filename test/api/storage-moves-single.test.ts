/**
 * Single repository storage moves (reference §4): who may call them, every 400 and 404 text,
 * the entity of each kind, the read-only window (a second move and a git push are refused), an
 * archived project's move failing with the project still usable, and moves onto the same place
 * refused. Moves here pause after copying (KILN_STORAGE_MOVE_TEST_DELAY_MS) so the window is
 * observable.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs/promises';
import os from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { exists, fillRepository, makeShards, refs, waitFor, type Shards } from '../helpers/storage-shards.ts';

let t: ListeningTestApp;
let shards: Shards;
let userToken: string;
// The server runs in this process: git must run asynchronously, or it would wait on a blocked server.
const run = promisify(execFile);

before(async () => {
  // `alias` is another name for the directory of `b`; `gone` is configured but does not exist.
  shards = await makeShards(['default', 'b', 'c'], { alias: 'b' });
  t = await startListeningApp({
    KILN_STORAGES: `${shards.env},gone=${path.join(shards.root, 'gone')}`,
    KILN_JOB_POLL_MS: '50',
    KILN_STORAGE_MOVE_TEST_DELAY_MS: '1500',
  });
  userToken = await createToken(t.db, await createUser(t.db));
});
after(async () => {
  await t.close();
  await shards.remove();
});

const root = { token: ROOT_TOKEN };
const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

async function newProject(name: string) {
  const r = await api('POST', '/projects', { name, path: name });
  assert.equal(r.statusCode, 201, r.body);
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
  await fillRepository(path.join(shards.dirs[row.repository_storage], row.disk_path), name);
  return row;
}

async function settled(kind: string, id: number) {
  return waitFor(`${kind} move ${id}`, async () => {
    const m = (await api('GET', `/${kind}_repository_storage_moves/${id}`)).json();
    return ['finished', 'failed', 'cleanup_failed'].includes(m.state) ? m : undefined;
  });
}

test('administrators only, checked before the parameters', async () => {
  assert.equal((await t.request({ method: 'GET', url: '/api/v4/project_repository_storage_moves' })).statusCode, 401);
  for (const [method, url] of [['GET', '/project_repository_storage_moves'], ['POST', '/snippet_repository_storage_moves'], ['POST', '/projects/1/repository_storage_moves'], ['GET', '/groups/x/repository_storage_moves'], ['GET', '/application/settings'], ['PUT', '/application/settings']] as const) {
    const r = await api(method, url, method === 'GET' ? undefined : {}, userToken);
    assert.equal(r.statusCode, 403, `${method} ${url}`);
    assert.deepEqual(r.json(), { message: '403 Forbidden' });
  }
});

test('bulk scheduling refuses unknown, unreachable and identical storages', async () => {
  const cases: [object, object][] = [
    [{}, { message: '400 Bad request - "source_storage_name" not given' }],
    [{ source_storage_name: 'nope' }, { error: 'source_storage_name does not have a valid value' }],
    [{ source_storage_name: 'default', destination_storage_name: 'nope' }, { error: 'destination_storage_name does not have a valid value' }],
    [{ source_storage_name: 'gone' }, { message: { source_storage_name: ['is not reachable'] } }],
    [{ source_storage_name: 'default', destination_storage_name: 'gone' }, { message: { destination_storage_name: ['is not reachable'] } }],
    [{ source_storage_name: 'b', destination_storage_name: 'alias' }, { message: { destination_storage_name: ['must be a different storage than source_storage_name (both are the same directory)'] } }],
    [{ source_storage_name: 'b', destination_storage_name: 'b' }, { message: { destination_storage_name: ['must be a different storage than source_storage_name (both are the same directory)'] } }],
  ];
  for (const [payload, body] of cases) {
    const r = await api('POST', '/project_repository_storage_moves', payload);
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), body);
  }
});

test('a single move: 201 scheduled, read-only until finished, pushes refused, then on the new shard', async () => {
  const project = await newProject('single-move');
  const sourceRepo = path.join(shards.dirs.default, project.disk_path);
  const before = refs(sourceRepo);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-push-'));
  const remote = `${t.url.replace('://', `://root:${ROOT_TOKEN}@`)}/root/single-move.git`;
  const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.com' };
  await run('git', ['clone', '--quiet', remote, work + '/c'], { env: gitEnv });
  await fs.writeFile(path.join(work, 'c', 'pushed.txt'), 'during the move\n');
  await run('git', ['-C', work + '/c', 'add', '.'], { env: gitEnv });
  await run('git', ['-C', work + '/c', 'commit', '--quiet', '-m', 'pushed during the move'], { env: gitEnv });

  const r = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(r.statusCode, 201, r.body);
  const move = r.json();
  assert.deepEqual(Object.keys(move).sort(), ['created_at', 'destination_storage_name', 'error_message', 'id', 'project', 'source_storage_name', 'state']);
  assert.equal(move.state, 'scheduled');
  assert.equal(move.source_storage_name, 'default');
  assert.equal(move.destination_storage_name, 'b');
  assert.equal(move.error_message, null);
  assert.deepEqual(move.project, {
    id: project.id, description: null, name: 'single-move', name_with_namespace: 'Administrator / single-move',
    path: 'single-move', path_with_namespace: 'root/single-move', created_at: project.created_at,
  });

  // While it moves: a second move is refused, and so is a push, with a message that says why.
  const again = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'c' });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { message: { project: ['is read-only'] } });
  await assert.rejects(run('git', ['-C', work + '/c', 'push', '--quiet', 'origin', 'HEAD'], { env: gitEnv }),
    (err: { stderr: string }) => /temporarily read-only/.test(err.stderr));

  const done = await settled('project', move.id);
  assert.equal(done.state, 'finished');
  assert.equal(await exists(sourceRepo), false);
  assert.equal(refs(path.join(shards.dirs.b, project.disk_path)), before);
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.repository_storage, 'b');
  assert.equal(row.read_only, 0);

  // Writable again, on the new shard.
  await run('git', ['-C', work + '/c', 'push', '--quiet', 'origin', 'HEAD'], { env: gitEnv });
  assert.notEqual(refs(path.join(shards.dirs.b, project.disk_path)), before);
  await fs.rm(work, { recursive: true, force: true });

  // Read back globally and per project; lists are newest first with offset headers.
  const list = await api('GET', `/projects/${project.id}/repository_storage_moves`);
  assert.equal(list.headers['x-total'], '1');
  assert.equal(list.json()[0].id, move.id);
  assert.equal((await api('GET', `/projects/root%2Fsingle-move/repository_storage_moves/${move.id}`)).json().state, 'finished');
  const all = await api('GET', '/project_repository_storage_moves?per_page=1');
  assert.equal(all.headers['x-per-page'], '1');
  assert.equal(all.json()[0].id, move.id);
});

test('lookup misses answer the Service 404 texts', async () => {
  const other = await newProject('no-moves');
  const cases: [string, object][] = [
    ['/project_repository_storage_moves/999999', { message: '404 Not found' }],
    [`/projects/${other.id}/repository_storage_moves/1`, { message: '404 Not found' }],
    ['/projects/999999/repository_storage_moves', { message: '404 Project Not Found' }],
    ['/snippets/999999/repository_storage_moves', { message: '404 Snippet Not Found' }],
    ['/groups/999999/repository_storage_moves', { message: '404 Group Not Found' }],
    ['/snippet_repository_storage_moves/999999', { message: '404 Not found' }],
    ['/group_repository_storage_moves/999999', { message: '404 Not found' }],
  ];
  for (const [url, body] of cases) {
    const r = await api('GET', url);
    assert.equal(r.statusCode, 404, url);
    assert.deepEqual(r.json(), body, url);
  }
  const post = await api('POST', '/projects/999999/repository_storage_moves', { destination_storage_name: 'b' });
  assert.deepEqual([post.statusCode, post.json()], [404, { message: '404 Project Not Found' }]);
  assert.deepEqual((await api('GET', '/project_repository_storage_moves/abc')).json(), { error: 'repository_storage_move_id is invalid' });
});

test('single moves refuse unknown, unreachable and identical destinations, leaving the project writable', async () => {
  const project = await newProject('refused-moves');
  const same = 'must be a different storage than source_storage_name (both are the same directory)';
  const cases: [object, object][] = [
    [{ destination_storage_name: 'nope' }, { destination_storage_name: ['is not included in the list'] }],
    [{ destination_storage_name: 'gone' }, { destination_storage_name: ['is not reachable'] }],
    [{ destination_storage_name: 'default' }, { destination_storage_name: [same] }],
    // No destination and no other shard with a weight: nowhere to go.
    [{}, { destination_storage_name: ["can't be blank: no other reachable storage has a weight above 0"] }],
  ];
  for (const [payload, errors] of cases) {
    const r = await api('POST', `/projects/${project.id}/repository_storage_moves`, payload);
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), { message: errors });
  }
  // Two names for one directory: the copy would land on the source itself.
  const moved = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal((await settled('project', moved.json().id)).state, 'finished');
  const alias = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'alias' });
  assert.deepEqual([alias.statusCode, alias.json()], [400, { message: { destination_storage_name: [same] } }]);
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.read_only, 0);
  assert.equal(await exists(path.join(shards.dirs.b, row.disk_path, 'HEAD')), true);
  assert.equal((await api('GET', `/projects/${project.id}/repository_storage_moves`)).json().length, 1);
});

test("an archived project's move fails; the project stays usable and moves once unarchived", async () => {
  const project = await newProject('archived-move');
  const repo = path.join(shards.dirs.default, project.disk_path);
  const before = refs(repo);
  assert.equal((await api('POST', `/projects/${project.id}/archive`)).statusCode, 201);
  const r = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'c' });
  assert.equal(r.statusCode, 201, r.body);
  const failed = await settled('project', r.json().id);
  assert.equal(failed.state, 'failed');
  assert.match(failed.error_message, /archived/);
  let row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.repository_storage, row.read_only], ['default', 0]);
  assert.equal(refs(repo), before);
  assert.equal(await exists(path.join(shards.dirs.c, project.disk_path)), false);

  assert.equal((await api('POST', `/projects/${project.id}/unarchive`)).statusCode, 201);
  const again = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'c' });
  assert.equal((await settled('project', again.json().id)).state, 'finished');
  row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.repository_storage, 'c');
  assert.equal(refs(path.join(shards.dirs.c, project.disk_path)), before);
});

test('a destination that becomes unreachable mid-move fails the move; the source is untouched', async () => {
  const project = await newProject('unreachable-move');
  const repo = path.join(shards.dirs.default, project.disk_path);
  const before = refs(repo);
  const moving = path.join(shards.root, 'c-away');
  const r = await api('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'c' });
  // The copy is in place and the move pauses (1.5 s) before verifying it: take the shard away.
  await waitFor('the copy', async () => ((await exists(path.join(shards.dirs.c, '.kiln-moves', `project-${r.json().id}.git`, 'HEAD'))) ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await fs.rename(shards.dirs.c, moving);
  try {
    const failed = await settled('project', r.json().id);
    assert.equal(failed.state, 'failed');
    assert.match(failed.error_message, /verification failed|not reachable/);
  } finally {
    await fs.rename(moving, shards.dirs.c);
  }
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.repository_storage, row.read_only], ['default', 0]);
  assert.equal(refs(repo), before);
});

test('snippet and group moves present their containers', async () => {
  const snippet = (await api('POST', '/snippets', { title: 'moving snippet', file_name: 'a.txt', content: 'x' })).json();
  const group = (await api('POST', '/groups', { name: 'Moving group', path: 'moving-group' })).json();
  const s = await api('POST', `/snippets/${snippet.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(s.statusCode, 201, s.body);
  assert.deepEqual(Object.keys(s.json().snippet).sort(), ['author', 'created_at', 'description', 'http_url_to_repo', 'id', 'project_id', 'raw_url', 'ssh_url_to_repo', 'title', 'updated_at', 'visibility', 'web_url']);
  assert.equal(s.json().snippet.author.username, 'root');
  const g = await api('POST', `/groups/moving-group/repository_storage_moves`, { destination_storage_name: 'c' });
  assert.equal(g.statusCode, 201, g.body);
  assert.deepEqual(g.json().group, { id: group.id, web_url: `${t.url}/groups/moving-group`, name: 'Moving group' });
  assert.equal((await settled('snippet', s.json().id)).state, 'finished');
  assert.equal((await settled('group', g.json().id)).state, 'finished');
  assert.equal((await api('GET', `/snippets/${snippet.id}/repository_storage_moves`)).json()[0].state, 'finished');
  assert.equal((await api('GET', `/groups/${group.id}/repository_storage_moves/${g.json().id}`)).json().group.name, 'Moving group');
  const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${snippet.id}/raw`, ...root });
  assert.equal(raw.body, 'x');
});
