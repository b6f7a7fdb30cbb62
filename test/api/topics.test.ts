/**
 * Project topics (issue 32, item 3; lib/api/topics.rb): a project's topic names create topics,
 * the list counts and orders them, administrators create, rename, delete and merge them and the
 * projects carrying them follow, and `topic=` filters projects.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('topics API', () => {
  let t: TestApp;
  let userToken: string;

  before(async () => {
    t = await startTestApp();
    userToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const makeProject = async (name: string, topics: string[], visibility = 'public') => {
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name, topics, visibility } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; topics: string[] };
  };
  const list = async (query = '') => (await t.request({ url: `/api/v4/topics${query}` })).json() as {
    id: number; name: string; total_projects_count: number;
  }[];

  it('creates topics from project topic names, counts them and orders the most used first', async () => {
    assert.deepEqual(await list(), []);
    await makeProject('one', ['ruby', 'Rails']);
    const two = await makeProject('two', ['RUBY', 'go']);
    // An existing topic lends its name whatever the case a project gives.
    assert.deepEqual(two.topics, ['ruby', 'go']);
    const topics = await list();
    assert.deepEqual(topics.map((x) => [x.name, x.total_projects_count]), [['ruby', 2], ['Rails', 1], ['go', 1]]);
    assert.deepEqual(Object.keys(topics[0]), ['id', 'name', 'title', 'description', 'total_projects_count', 'avatar_url']);
    assert.deepEqual((await list('?search=RU')).map((x) => x.name), ['ruby']);

    const filtered = await t.request({ url: '/api/v4/projects?topic=ruby,go' });
    assert.deepEqual(filtered.json().map((p: { id: number }) => p.id), [two.id]);

    // Taking a topic off a project uncounts it.
    const changed = await t.request({ method: 'PUT', url: `/api/v4/projects/${two.id}`, token: ROOT_TOKEN, payload: { topics: ['go'] } });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(changed.json().topics, ['go']);
    assert.deepEqual((await list()).map((x) => [x.name, x.total_projects_count]), [['ruby', 1], ['Rails', 1], ['go', 1]]);
  });

  it('lets administrators create, change and delete topics, with the validations', async () => {
    const body = { name: 'my-topic', title: 'My topic', description: 'About it' };
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/topics', payload: body })).statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/topics', token: userToken, payload: body })).statusCode, 403);
    const made = await t.request({ method: 'POST', url: '/api/v4/topics', token: ROOT_TOKEN, payload: body });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual(made.json(), { ...body, id: made.json().id, total_projects_count: 0, avatar_url: null });
    const taken = await t.request({ method: 'POST', url: '/api/v4/topics', token: ROOT_TOKEN, payload: { ...body, name: 'MY-TOPIC' } });
    assert.equal(taken.statusCode, 400);
    assert.deepEqual(taken.json(), { message: { name: ['has already been taken'] } });
    const missing = await t.request({ method: 'POST', url: '/api/v4/topics', token: ROOT_TOKEN, payload: { name: 'x' } });
    assert.deepEqual(missing.json(), { message: '400 Bad request - "title" not given' });
    const blank = await t.request({ method: 'POST', url: '/api/v4/topics', token: ROOT_TOKEN, payload: { name: ' ', title: 'x' } });
    assert.deepEqual(blank.json(), { message: { name: ["can't be blank"] } });
    assert.deepEqual((await list('?without_projects=true')).map((x) => x.name), ['my-topic']);

    const id = made.json().id as number;
    const updated = await t.request({ method: 'PUT', url: `/api/v4/topics/${id}`, token: ROOT_TOKEN, payload: { description: 'Changed' } });
    assert.equal(updated.json().description, 'Changed');
    assert.equal((await t.request({ url: `/api/v4/topics/${id}` })).json().description, 'Changed');
    const clash = await t.request({ method: 'PUT', url: `/api/v4/topics/${id}`, token: ROOT_TOKEN, payload: { name: 'Ruby' } });
    assert.deepEqual(clash.json(), { message: { name: ['has already been taken'] } });
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/topics/${id}`, token: ROOT_TOKEN })).statusCode, 204);
    assert.deepEqual((await t.request({ url: `/api/v4/topics/${id}` })).json(), { message: '404 Topic Not Found' });
  });

  it('renames and merges topics, and their projects follow', async () => {
    const project = await makeProject('three', ['alpha', 'beta']);
    const byName = async (name: string) => (await list(`?search=${name}`)).find((x) => x.name === name)!;
    const alpha = await byName('alpha');
    const beta = await byName('beta');
    const renamed = await t.request({ method: 'PUT', url: `/api/v4/topics/${alpha.id}`, token: ROOT_TOKEN, payload: { name: 'Alpha2' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const read = async () => (await t.request({ url: `/api/v4/projects/${project.id}`, token: ROOT_TOKEN })).json().topics;
    assert.deepEqual(await read(), ['Alpha2', 'beta']);

    const same = await t.request({
      method: 'POST', url: '/api/v4/topics/merge', token: ROOT_TOKEN, payload: { source_topic_id: beta.id, target_topic_id: beta.id },
    });
    assert.deepEqual(same.json(), { message: 'The source topic and the target topic are identical.' });
    const merged = await t.request({
      method: 'POST', url: '/api/v4/topics/merge', token: ROOT_TOKEN, payload: { source_topic_id: alpha.id, target_topic_id: beta.id },
    });
    assert.equal(merged.statusCode, 201, merged.body);
    assert.equal(merged.json().id, beta.id);
    assert.equal(merged.json().total_projects_count, 1);
    assert.deepEqual(await read(), ['beta']);
    assert.equal((await t.request({ url: `/api/v4/topics/${alpha.id}` })).statusCode, 404);

    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/topics/${beta.id}`, token: ROOT_TOKEN })).statusCode, 204);
    assert.deepEqual(await read(), []);
  });
});
