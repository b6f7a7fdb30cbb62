/**
 * CI/CD variables at three levels (issue 20, item 3): the Service's shapes, codes and messages,
 * masking rules, uniqueness of key + environment scope, who may manage them, and values stored
 * only encrypted with the data directory's key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';

describe('CI/CD variables', () => {
  let t: TestApp;
  let p: CiProject;
  let developerToken: string;

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t);
    const developer = await createUser(t.db);
    developerToken = await createToken(t.db, developer, { scopes: ['api'] });
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: developer.id, access_level: 30 } });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(async () => { await t.close(); });

  const url = (suffix = '') => `/api/v4/projects/${p.project.id}/variables${suffix}`;

  it('creates a project variable, shows it, and stores only ciphertext', async () => {
    const res = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { key: 'DEPLOY_TOKEN', value: 'abcdefgh12345678', masked: true, protected: true } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), {
      variable_type: 'env_var', key: 'DEPLOY_TOKEN', value: 'abcdefgh12345678', protected: true, masked: true, raw: false, environment_scope: '*',
    });
    const row = await t.db.selectFrom('ci_variables').selectAll().where('project_id', '=', p.project.id).executeTakeFirstOrThrow();
    assert.ok(row.encrypted_value.startsWith('v1:'));
    assert.ok(!row.encrypted_value.includes('abcdefgh'));
    const key = fs.readFileSync(path.join(t.dataDir, 'keys', 'ci_variables.key'), 'utf8').trim();
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(fs.statSync(path.join(t.dataDir, 'keys', 'ci_variables.key')).mode & 0o777, 0o600);

    const shown = await t.request({ method: 'GET', url: url('/DEPLOY_TOKEN'), token: p.ownerToken });
    assert.equal(shown.statusCode, 200);
    assert.equal(shown.json().value, 'abcdefgh12345678');
  });

  it('lets only one of two concurrent creates of a key win (a unique index, not a read-then-write)', async () => {
    const results = await Promise.all([1, 2, 3].map((i) => t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { key: 'RACED', value: `v${i}` } })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 400, 400]);
    const rows = await t.db.selectFrom('ci_variables').select('id').where('project_id', '=', p.project.id).where('key', '=', 'RACED').execute();
    assert.equal(rows.length, 1);
    assert.equal((await t.request({ method: 'DELETE', url: url('/RACED'), token: p.ownerToken })).statusCode, 204);
  });

  it('answers the Service validation messages', async () => {
    const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: url(), token: p.ownerToken, payload });
    let res = await post({ key: 'DEPLOY_TOKEN', value: 'again-and-again' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { key: ['(DEPLOY_TOKEN) has already been taken'] } });
    res = await post({ key: 'SHORT', value: 'short', masked: true });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { value: ['is invalid'] } }]);
    res = await post({ key: 'SPACES', value: 'has some spaces', masked: true });
    assert.deepEqual(res.json(), { message: { value: ['is invalid'] } });
    res = await post({ key: 'bad-key', value: 'x' });
    assert.deepEqual(res.json(), { message: { key: ["can contain only letters, digits and '_'."] } });
    res = await post({ key: 'K', value: 'x'.repeat(10_001) });
    assert.deepEqual(res.json(), { message: { value: ['The value of the provided variable exceeds the 10000 character limit'] } });
    res = await post({ key: 'K', value: 'x', environment_scope: 'bad|scope' });
    assert.deepEqual(res.json(), { message: { environment_scope: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces"] } });
    res = await post({ key: 'K', value: 'x', variable_type: 'other' });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'variable_type does not have a valid value' }]);
    res = await post({ value: 'x' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "key" not given' }]);
    res = await post({ key: 'K'.repeat(256), value: 'x' });
    assert.deepEqual(res.json(), { message: { key: ['is too long (maximum is 255 characters)'] } });
    res = await post({ key: 'NUL', value: 'a\u0000b', environment_scope: 'a\u0000b' });
    assert.equal(res.statusCode, 400);
  });

  it('keeps one key per environment scope, and asks for a filter when a key has several', async () => {
    const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: url(), token: p.ownerToken, payload });
    assert.equal((await post({ key: 'SCOPED', value: 'all' })).statusCode, 201);
    assert.equal((await post({ key: 'SCOPED', value: 'prod', environment_scope: 'production', variable_type: 'file', raw: true })).statusCode, 201);
    assert.equal((await post({ key: 'SCOPED', value: 'again', environment_scope: 'production' })).statusCode, 400);
    let res = await t.request({ method: 'GET', url: url('/SCOPED'), token: p.ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [409, { message: "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'" }]);
    res = await t.request({ method: 'GET', url: url('/SCOPED?filter[environment_scope]=production'), token: p.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { variable_type: 'file', key: 'SCOPED', value: 'prod', protected: false, masked: false, raw: true, environment_scope: 'production' });
    res = await t.request({ method: 'PUT', url: url('/SCOPED'), token: p.ownerToken, payload: { value: 'prod-2', filter: { environment_scope: 'production' } } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().value, 'prod-2');
    // Masking a value that cannot be masked fails on update too.
    res = await t.request({ method: 'PUT', url: url('/SCOPED'), token: p.ownerToken, payload: { masked: true, filter: { environment_scope: '*' } } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { value: ['is invalid'] } }]);
    res = await t.request({ method: 'DELETE', url: url('/SCOPED?filter[environment_scope]=production'), token: p.ownerToken });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'GET', url: url('/SCOPED'), token: p.ownerToken });
    assert.equal(res.json().value, 'all');
  });

  it('lists with pagination, and answers the Service not-found texts', async () => {
    const res = await t.request({ method: 'GET', url: url('?per_page=1'), token: p.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().length, 1);
    assert.equal(res.headers['x-total'], '2');
    assert.match(String(res.headers.link), /rel="next"/);
    for (const [method, suffix] of [['GET', '/MISSING'], ['PUT', '/MISSING'], ['DELETE', '/MISSING'], ['GET', '/%00'], ['GET', '/MISSING?filter[environment_scope]=%00']] as const) {
      const r = await t.request({ method, url: url(suffix), token: p.ownerToken, payload: method === 'PUT' ? { value: 'x' } : undefined });
      assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Variable Not Found' }], `${method} ${suffix}`);
    }
  });

  it('takes Maintainer: Developers get 403, strangers 404, anonymous 401', async () => {
    let res = await t.request({ method: 'GET', url: url(), token: developerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    const stranger = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
    res = await t.request({ method: 'GET', url: url(), token: stranger });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
    res = await t.request({ method: 'GET', url: url() });
    assert.equal(res.statusCode, 401);
  });

  it('removes the variables and trigger tokens of a deleted project', async () => {
    const q = await createCiProject(t);
    let res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/variables`, token: q.ownerToken, payload: { key: 'GOES', value: 'away' } });
    assert.equal(res.statusCode, 201);
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/triggers`, token: q.ownerToken, payload: { description: 'goes too' } });
    assert.equal(res.statusCode, 201);
    res = await t.request({ method: 'DELETE', url: `/api/v4/projects/${q.project.id}`, token: q.ownerToken });
    assert.equal(res.statusCode, 202, res.body);
    for (let i = 0; i < 50 && await t.db.selectFrom('projects').select('id').where('id', '=', q.project.id).executeTakeFirst(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await t.db.selectFrom('ci_variables').select('id').where('project_id', '=', q.project.id).executeTakeFirst(), undefined);
    assert.equal(await t.db.selectFrom('ci_triggers').select('id').where('project_id', '=', q.project.id).executeTakeFirst(), undefined);
  });

  it('manages group variables as the group owner', async () => {
    const owner = await createUser(t.db);
    const ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
    const g = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Var Group', path: 'var-group' } });
    assert.equal(g.statusCode, 201, g.body);
    const gid = g.json().id as number;
    let res = await t.request({ method: 'POST', url: `/api/v4/groups/${gid}/variables`, token: ownerToken, payload: { key: 'GROUP_VAR', value: 'g-value' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { variable_type: 'env_var', key: 'GROUP_VAR', value: 'g-value', protected: false, masked: false, raw: false, environment_scope: '*' });
    res = await t.request({ method: 'GET', url: '/api/v4/groups/var-group/variables', token: ownerToken });
    assert.deepEqual(res.json().map((v: { key: string }) => v.key), ['GROUP_VAR']);
    res = await t.request({ method: 'PUT', url: `/api/v4/groups/${gid}/variables/GROUP_VAR`, token: ownerToken, payload: { protected: true } });
    assert.equal(res.json().protected, true);
    res = await t.request({ method: 'GET', url: `/api/v4/groups/${gid}/variables/NOPE`, token: ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 GroupVariable Not Found' }]);
    // A private group is not even visible to others; a Maintainer of it may not manage variables.
    res = await t.request({ method: 'GET', url: `/api/v4/groups/${gid}/variables`, token: p.ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);
    res = await t.request({ method: 'POST', url: `/api/v4/groups/${gid}/members`, token: ownerToken, payload: { user_id: p.owner.id, access_level: 40 } });
    assert.equal(res.statusCode, 201, res.body);
    res = await t.request({ method: 'GET', url: `/api/v4/groups/${gid}/variables`, token: p.ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'DELETE', url: `/api/v4/groups/${gid}/variables/GROUP_VAR`, token: ownerToken });
    assert.equal(res.statusCode, 204);
  });

  it('manages instance variables as an administrator, without environment scopes', async () => {
    let res = await t.request({ method: 'POST', url: '/api/v4/admin/ci/variables', token: ROOT_TOKEN, payload: { key: 'INSTANCE_VAR', value: 'i-value', variable_type: 'file' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { variable_type: 'file', key: 'INSTANCE_VAR', value: 'i-value', protected: false, masked: false, raw: false });
    res = await t.request({ method: 'POST', url: '/api/v4/admin/ci/variables', token: ROOT_TOKEN, payload: { key: 'INSTANCE_VAR', value: 'again' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { key: ['(INSTANCE_VAR) has already been taken'] } }]);
    res = await t.request({ method: 'PUT', url: '/api/v4/admin/ci/variables/INSTANCE_VAR', token: ROOT_TOKEN, payload: { value: 'i-value-2', raw: true } });
    assert.deepEqual(res.json(), { variable_type: 'file', key: 'INSTANCE_VAR', value: 'i-value-2', protected: false, masked: false, raw: true });
    res = await t.request({ method: 'GET', url: '/api/v4/admin/ci/variables', token: ROOT_TOKEN });
    assert.deepEqual(res.json().map((v: { key: string }) => v.key), ['INSTANCE_VAR']);
    res = await t.request({ method: 'GET', url: '/api/v4/admin/ci/variables', token: p.ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'GET', url: '/api/v4/admin/ci/variables/NOPE', token: ROOT_TOKEN });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 InstanceVariable Not Found' }]);
    res = await t.request({ method: 'DELETE', url: '/api/v4/admin/ci/variables/INSTANCE_VAR', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
  });

});

describe('CI/CD variable values and the log', () => {
  let t: TestApp;
  const lines: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));

  before(async () => { t = await startTestApp({ LOG_LEVEL: 'info' }, { logStream: stream }); });
  after(async () => { await t.close(); });

  it('never logs a value, even one sent in the query string', async () => {
    const p = await createCiProject(t);
    const secret = 'masked-s3cr3t-in-the-query';
    let res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/variables?key=LOGGED&masked=true&value=${secret}`, token: p.ownerToken });
    assert.equal(res.statusCode, 201, res.body);
    res = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}/variables/LOGGED?value=${secret}-2`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main&variables[][key]=A&variables[][value]=${secret}`, token: p.ownerToken });
    assert.equal(res.statusCode, 400, res.body);
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join('\n');
    assert.match(text, /variables\?key=LOGGED/);
    assert.ok(!text.includes(secret), text);
  });
});
