/**
 * Ids and text past their bounds on every interface besides the REST API (issue 35, item 13):
 * git's smart HTTP paths and credentials, every GraphQL argument (made from the schema, so a
 * field added later is fuzzed too), SCIM's group paths, ids, filters and bodies, OAuth's and the
 * pages' JSON bodies and client credentials, and the pages' path ids. An id past PostgreSQL's
 * `integer`, a NUL, a lone surrogate or an overlong string must be the interface's own
 * not-found or error answer: never a 5xx, never GraphQL's "Internal server error", and SCIM's
 * 4xx in SCIM's error shape. FUZZ_SEED replays a run, as for fuzz-openapi.test.ts; FUZZ_CASES=<n|all>
 * sets how many sampled values each GraphQL argument gets besides the ones always sent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildClientSchema, getIntrospectionQuery, isEnumType, type GraphQLNamedType } from 'graphql';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { HOSTILE_IDS, HOSTILE_TEXT, incompressible, pick, seededRandom } from '../helpers/fuzz.ts';
import { graphqlCases, reachQuery } from '../helpers/fuzz-graphql.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { createSession } from '../helpers/factories.ts';
import { registerClient, REDIRECT_URI } from '../helpers/oauth.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { ERROR_URN, SCIM_JSON } from '../helpers/scim.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
/** Hostile values per GraphQL leaf besides the ones always sent (FUZZ_CASES=all: every one). */
const SAMPLED_PER_LEAF = process.env.FUZZ_CASES === 'all' ? Infinity : Number(process.env.FUZZ_CASES ?? 4);

/** Path segments, already encoded: the ids, then text a path can carry. */
const SEGMENTS: readonly string[] = [
  ...HOSTILE_IDS, '%00', 'a%00b', '%ED%A0%80', '%C0%80', '%FF', '%F0%9F%98%80', '%0A', '%2E%2E', "'", incompressible(3000),
];
/** Non-string JSON values for a field that takes a string. */
const WRONG_TYPES: readonly { name: string; value: unknown }[] = [
  { name: '2^31', value: 2 ** 31 }, { name: '1e308', value: 1e308 }, { name: '-1', value: -1 }, { name: 'true', value: true },
  { name: 'object', value: { a: 'b\u0000' } }, { name: 'array', value: ['a\u0000'] }, { name: 'null', value: null },
];
const JSON_VALUES = [...HOSTILE_TEXT, ...WRONG_TYPES];
const cursor = (id: string) => Buffer.from(JSON.stringify({ id })).toString('base64');

interface Failure { what: string; status: number; body: string }

describe(`fuzzing git, GraphQL, SCIM, OAuth and the pages with ids and text past their bounds (FUZZ_SEED=${SEED})`, () => {
  let t: TestApp;
  let repo: string;
  let groupPath: string;
  let snippetId: number;
  let scimToken: string;
  const ids: Record<string, number> = {};
  let failures: Failure[];
  let count: number;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    const ci = await createCiProject(t);
    repo = ci.fullPath;
    await pushFiles(t, ci, { '.gitlab-ci.yml': 'build:\n  script: echo hi\nlater:\n  script: echo later\n  when: manual\n' });
    const runner = await TestRunner.register(t);
    const pipeline = await createPipeline(t, ci);
    const job = await runner.requestJob();
    await runner.appendTrace(job, 'line one\nline two\n');
    Object.assign(ids, { pipeline: pipeline.id, job: job.id, runner: runner.id, project: ci.project.id });
    const post = async (url: string, payload?: object) => (await t.request({ method: 'POST', url, token: ROOT_TOKEN, payload })).json();
    const group = await post('/api/v4/groups', { name: 'Fuzz', path: 'fuzz-group' });
    groupPath = group.path;
    scimToken = (await post(`/api/v4/groups/${group.id}/scim_token`)).token;
    snippetId = (await post('/api/v4/snippets', { title: 'f', file_name: 'a.txt', content: 'x', visibility: 'public' })).id;
  });
  after(async () => { await t.close(); });

  const start = () => {
    failures = [];
    count = 0;
    return performance.now();
  };
  /** Records a 5xx, or what `problem` finds wrong with an answer. */
  const check = (what: string, res: LightMyRequestResponse, problem?: (res: LightMyRequestResponse) => string | null) => {
    count += 1;
    const wrong = res.statusCode >= 500 ? 'a 5xx' : problem?.(res) ?? null;
    if (wrong) failures.push({ what: `${what}: ${wrong}`, status: res.statusCode, body: res.body.slice(0, 200) });
  };
  const namesNothing = (r: LightMyRequestResponse) => (r.statusCode < 400 ? 'answered a path that names nothing' : null);
  const noInternalError = (r: LightMyRequestResponse) => (r.body.includes('Internal server error') ? 'an internal error' : null);
  const finish = (name: string, started: number) => {
    console.log(`fuzz ${name} (${t.dialect}): seed ${SEED}, ${count} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const report = failures.slice(0, 40).map((f) => `${f.status} ${f.what}\n    ${f.body}`).join('\n');
    assert.equal(failures.length, 0, `${failures.length} failures (FUZZ_SEED=${SEED}):\n${report}`);
  };

  it('git smart HTTP: repository paths and credentials past their bounds are 4xx', async () => {
    const started = start();
    const random = seededRandom(SEED);
    const [ns, project] = [repo.slice(0, repo.lastIndexOf('/')), repo.slice(repo.lastIndexOf('/') + 1)];
    const basic = (user: string, password: string | Buffer) =>
      `Basic ${Buffer.concat([Buffer.from(`${user}:`), Buffer.isBuffer(password) ? password : Buffer.from(password)]).toString('base64')}`;
    const rootBasic = basic('root', ROOT_TOKEN);
    const repositories = (x: string) => [
      `/snippets/${x}.git`, `/${x}.git`, `/${ns}/${x}.git`, `/${x}/${project}.git`, `/${x}.wiki.git`, `/${groupPath}/${x}.wiki.git`,
    ];
    const requests = (base: string): [string, string, string | undefined][] => [
      ['GET', `${base}/info/refs?service=git-upload-pack`, undefined],
      ['GET', `${base}/info/refs?service=git-receive-pack`, undefined],
      ['POST', `${base}/git-upload-pack`, 'application/x-git-upload-pack-request'],
      ['POST', `${base}/git-receive-pack`, 'application/x-git-receive-pack-request'],
    ];
    let n = 0;
    for (const segment of SEGMENTS) {
      for (const base of repositories(segment)) {
        for (const [method, url, type] of requests(base)) {
          // Anonymous and signed in, in turn: both look the repository up.
          const headers: Record<string, string> = n++ % 2 === 0 ? { authorization: rootBasic } : {};
          if (type) headers['content-type'] = type;
          const res = await t.app.inject({ method: method as 'GET', url, headers, ...(type ? { payload: '0000' } : {}) });
          check(`${method} ${url.slice(0, 80)}`, res, namesNothing);
        }
      }
    }
    // The issue's own case.
    for (const id of ['99999999999999999999', '2147483648']) {
      const url = `/snippets/${id}.git/info/refs?service=git-upload-pack`;
      const far = await t.app.inject({ url, headers: { authorization: rootBasic } });
      check(`GET /snippets/${id}.git/info/refs`, far, (r) => (r.statusCode === 404 ? null : 'not the not-found answer'));
    }
    // Credentials: every user name git clients send, with passwords no token can be.
    const passwords: (string | Buffer)[] = [
      ...HOSTILE_TEXT.map((h) => h.value), ...HOSTILE_IDS, Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]), incompressible(100 * 1024),
    ];
    const refs = [`/${repo}.git/info/refs?service=git-upload-pack`, `/snippets/${snippetId}.git/info/refs?service=git-upload-pack`];
    for (const user of ['root', 'oauth2', 'gitlab-ci-token', 'a\u0000b', incompressible(3000)]) {
      for (const password of pick(random, passwords, 8)) {
        for (const url of refs) {
          check(`GET ${url} as ${user.slice(0, 20)}`, await t.app.inject({ url, headers: { authorization: basic(user, password) } }));
        }
      }
    }
    finish('git', started);
  });

  it('GraphQL: every argument of every reachable field, ids past 2^31 and bad text, answered without an internal error', async () => {
    const started = start();
    const random = seededRandom(SEED);
    const gql = (query: string, variables?: object) =>
      t.request({ method: 'POST', url: '/api/graphql', token: ROOT_TOKEN, payload: { query, ...(variables ? { variables } : {}) } });
    const introspection = await gql(getIntrospectionQuery());
    assert.equal(introspection.statusCode, 200, introspection.body);
    const schema = buildClientSchema(introspection.json().data);
    const gidModel = (name: string) => /"gid:\/\/gitlab\/([A-Za-z:]+)\/1"/.exec(schema.getType(name)?.description ?? '')?.[1];
    const realIds: Record<string, number> = {
      User: 1, 'Ci::Pipeline': ids.pipeline!, 'Ci::Build': ids.job!, CommitStatus: ids.job!,
      'Ci::Runner': ids.runner!, Project: ids.project!,
    };
    const strings = [...HOSTILE_TEXT.map((h) => ({ name: h.name, value: h.value as unknown })),
      ...HOSTILE_IDS.map((id) => ({ name: `id ${id}`, value: id as unknown })),
      { name: 'gid past 2^31', value: 'gid://gitlab/Project/2147483648' },
      { name: 'cursor past 2^31', value: cursor('2147483648') }, { name: 'cursor of 20 digits', value: cursor('99999999999999999999') },
      { name: 'cursor -1', value: cursor('-1') }];
    const always = new Set(['nul', 'lone high surrogate', '3000 characters', 'id 2147483648', 'id 99999999999999999999', '2^31']);
    const hostile = (type: GraphQLNamedType): { name: string; value: unknown }[] => {
      let all: { name: string; value: unknown }[];
      const model = gidModel(type.name);
      if (model) {
        const gid = (tail: string) => `gid://gitlab/${model}/${tail}`;
        all = [...HOSTILE_IDS.map((id) => ({ name: `id ${id}`, value: gid(id) })), { name: 'nul', value: gid('1\u0000') },
          { name: 'lone high surrogate', value: gid('\ud800') }, { name: '3000 characters', value: gid('1'.repeat(3000)) },
          { name: 'another model', value: 'gid://gitlab/Nope/1' }, { name: '2^31', value: 2 ** 31 }];
      } else if (type.name === 'Int') {
        all = [2 ** 31 - 1, -(2 ** 31), 2 ** 31, -1, 0].map((v) => ({ name: String(v), value: v }));
      } else if (type.name === 'Float' || type.name === 'Duration') {
        all = [1e308, -1].map((v) => ({ name: String(v), value: v }));
      } else if (type.name === 'Boolean' || isEnumType(type)) {
        all = [{ name: 'nul', value: 'a\u0000' }];
      } else {
        all = [...strings, ...(type.name === 'ID' ? [{ name: '2^31', value: 2 ** 31 }, { name: '1e20', value: 1e20 }] : [])];
      }
      return [...all.filter((h) => always.has(h.name)), ...pick(random, all.filter((h) => !always.has(h.name)), SAMPLED_PER_LEAF)];
    };
    const valid = (scalar: string, arg: string, field: string): unknown => {
      const model = gidModel(scalar);
      if (model) return `gid://gitlab/${model}/${realIds[model] ?? 1}`;
      const type = schema.getType(scalar);
      if (type && isEnumType(type)) return type.getValues()[0]!.name;
      if (arg === 'fullPath') return field === 'group' ? groupPath : repo;
      if (arg === 'username') return 'root';
      if (scalar === 'Int') return 1;
      if (scalar === 'Boolean') return false;
      if (scalar === 'Time') return '2026-01-01T00:00:00Z';
      return scalar === 'ID' ? '1' : 'x';
    };
    // Fields whose arguments are all optional though one is needed to name an object.
    const reach: Record<string, string> = {
      'Query.user': '(username: "root")',
      'Project.pipeline': `(id: "gid://gitlab/Ci::Pipeline/${ids.pipeline}")`,
      'Pipeline.job': `(id: "gid://gitlab/Ci::Build/${ids.job}")`,
    };
    const values = { valid, hostile, reachWith: (owner: string, field: string) => reach[`${owner}.${field}`] };
    // The ways to the objects resolve, so that the arguments of their fields reach their resolvers.
    for (const type of ['Project', 'Group', 'Pipeline', 'CiJob', 'CiJobTrace', 'CiRunner', 'UserCore']) {
      const res = await gql(reachQuery(schema, values, type) ?? `{ no way to ${type} }`);
      assert.ok(res.body.includes(`"__typename":"${type}"`) && !res.json().errors, `${type}: ${res.body}`);
    }
    const cases = graphqlCases(schema, values);
    for (const c of cases) check(c.what, await gql(c.query, c.variables), noInternalError);
    // A handful anonymously and through GET as well: the same resolvers behind other callers.
    for (const c of pick(random, cases.filter((x) => x.query.startsWith('query')), 20)) {
      const url = `/api/graphql?query=${encodeURIComponent(c.query)}&variables=${encodeURIComponent(JSON.stringify(c.variables))}`;
      const res = await t.request({ method: 'GET', url: url.length < 60_000 ? url : '/api/graphql?query=%7B__typename%7D' });
      check(`anonymous GET ${c.what}`, res, noInternalError);
    }
    // Text GraphQL reads itself: the document, the operation's name and variables given as JSON text.
    for (const raw of ['%00', '%7B__typename%00%7D', '%ED%A0%80', '%FF']) {
      for (const url of [`/api/graphql?query=${raw}`, `/api/graphql?query=%7B__typename%7D&operationName=${raw}`,
        `/api/graphql?query=query(%24u%3AString!)%7Buser(username%3A%24u)%7Bid%7D%7D&variables=%7B%22u%22%3A%22${raw}%22%7D`]) {
        check(`GET ${url}`, await t.request({ url, token: ROOT_TOKEN }), noInternalError);
      }
    }
    finish('GraphQL', started);
  });

  it('SCIM: group paths, ids, filters, paging and bodies past their bounds answer in SCIM\'s error shape', async () => {
    const started = start();
    const scimShape = (r: LightMyRequestResponse): string | null => {
      if (r.statusCode < 400) return null;
      if (r.headers['content-type'] !== SCIM_JSON) return `content-type ${String(r.headers['content-type'])}`;
      try {
        return r.json().schemas?.[0] === ERROR_URN ? null : 'not a SCIM error';
      } catch {
        return 'not JSON';
      }
    };
    const scim = async (what: string, method: string, path: string, payload?: unknown, group = groupPath) => {
      const headers: Record<string, string> = { authorization: `Bearer ${scimToken}` };
      if (payload !== undefined) headers['content-type'] = SCIM_JSON;
      const res = await t.app.inject({
        method: method as 'GET', url: `/api/scim/v2/groups/${group}${path}`, headers,
        ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      });
      check(`${method} ${what}`, res, scimShape);
    };
    const patchSchemas = ['urn:ietf:params:scim:api:messages:2.0:PatchOp'];
    const patchBody = { schemas: patchSchemas, Operations: [{ op: 'replace', path: 'active', value: true }] };
    for (const segment of SEGMENTS) {
      await scim(`group ${segment.slice(0, 30)}`, 'GET', '/Users', undefined, segment);
      await scim(`group ${segment.slice(0, 30)}/x`, 'GET', '/Users/x', undefined, `${segment}/x`);
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        await scim(`/Users/${segment.slice(0, 30)}`, method, `/Users/${segment}`, method === 'PATCH' ? patchBody : undefined);
      }
    }
    const q = encodeURIComponent;
    for (const attribute of ['userName', 'externalId', 'id', 'urn:ietf:params:scim:schemas:core:2.0:User:userName']) {
      for (const h of HOSTILE_TEXT) {
        await scim(`filter ${attribute} eq ${h.name}`, 'GET', `/Users?filter=${q(`${attribute} eq ${JSON.stringify(h.value)}`)}`);
      }
      for (const id of HOSTILE_IDS) await scim(`filter ${attribute} eq ${id}`, 'GET', `/Users?filter=${q(`${attribute} eq ${id}`)}`);
    }
    for (const name of ['startIndex', 'count']) {
      for (const v of [...HOSTILE_IDS, '-2147483649', '1e309', '%00', '9'.repeat(3000)]) {
        await scim(`${name}=${v.slice(0, 20)}`, 'GET', `/Users?${name}=${v}`);
      }
    }
    const created = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], externalId: 'fuzz-1', userName: 'fuzz.one', active: true,
      name: { formatted: 'Fuzz One', givenName: 'Fuzz', familyName: 'One' }, displayName: 'Fuzz One',
      emails: [{ type: 'work', value: 'fuzz.one@example.org', primary: true }],
    };
    const fields: (string | number)[][] = [
      ['externalId'], ['userName'], ['name', 'formatted'], ['name', 'givenName'], ['name', 'familyName'],
      ['displayName'], ['emails', 0, 'value'], ['emails', 0, 'type'], ['active'],
    ];
    const setAt = (root: any, path: (string | number)[], value: unknown): any => {
      if (path.length === 0) return value;
      const copy = Array.isArray(root) ? [...root] : { ...root };
      copy[path[0]!] = setAt(root?.[path[0]!], path.slice(1), value);
      return copy;
    };
    for (const field of fields) {
      for (const h of JSON_VALUES) {
        await scim(`POST /Users ${field.join('.')} = ${h.name}`, 'POST', '/Users', setAt(created, field, h.value));
      }
    }
    const target = {
      ...created, externalId: 'fuzz-target', userName: 'fuzz.target',
      emails: [{ type: 'work', value: 'fuzz.target@example.org', primary: true }],
    };
    const made = await t.app.inject({
      method: 'POST', url: `/api/scim/v2/groups/${groupPath}/Users`, payload: JSON.stringify(target),
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': SCIM_JSON },
    });
    assert.equal(made.statusCode, 201, made.body);
    const paths = [
      'active', 'externalId', 'id', 'userName', 'name.formatted', 'name.givenName', 'name.familyName', 'displayName',
      'emails[type eq "work"].value',
    ];
    for (const path of paths) {
      for (const h of JSON_VALUES) {
        const op = (value: unknown) => ({ schemas: patchSchemas, Operations: [value] });
        await scim(`PATCH ${path} = ${h.name}`, 'PATCH', '/Users/fuzz-target', op({ op: 'replace', path, value: h.value }));
        await scim(`PATCH {${path}: ${h.name}}`, 'PATCH', '/Users/fuzz-target', op({ op: 'replace', value: { [path]: h.value } }));
      }
    }
    for (const h of JSON_VALUES) {
      const body = { schemas: patchSchemas, Operations: [{ op: 'add', path: h.value, value: 'x' }] };
      await scim(`PATCH path = ${h.name}`, 'PATCH', '/Users/fuzz-target', body);
    }
    finish('SCIM', started);
  });

  it('OAuth and the pages: JSON bodies, client credentials and path ids past their bounds are 4xx', async () => {
    const started = start();
    const random = seededRandom(SEED);
    const client = await registerClient(t, { ownerId: 1 });
    const root = await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const session = await createSession(t.db, root);
    const cookie = `_service_session=${session}`;
    const csrf = csrfTokenFor(t.app.kiln.secretKeyBase, session);
    const preSession = 'a'.repeat(64);
    const preCsrf = csrfTokenFor(t.app.kiln.secretKeyBase, `pre-session:${preSession}`);
    const creds = { client_id: client.clientId, client_secret: client.secret };
    // URL, headers, the valid JSON body; each of its fields then gets each hostile value.
    const forms: [string, Record<string, string>, Record<string, unknown>][] = [
      ['/oauth/token', {}, { grant_type: 'password', username: 'root', password: 'x', scope: 'api', ...creds }],
      ['/oauth/token', {}, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, code_verifier: 'v', ...creds }],
      ['/oauth/token', {}, { grant_type: 'refresh_token', refresh_token: 'x', scope: 'api', ...creds }],
      ['/oauth/revoke', {}, { token: 'x', token_type_hint: 'access_token', ...creds }],
      ['/oauth/userinfo', {}, { access_token: 'x' }],
      ['/oauth/authorize', { cookie }, {
        client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api', state: 's', nonce: 'n',
        code_challenge: 'c'.repeat(43), code_challenge_method: 'S256', authenticity_token: csrf,
      }],
      ['/profile/applications', { cookie }, {
        authenticity_token: csrf,
        doorkeeper_application: { name: 'n', redirect_uri: 'https://a.example/cb', scopes: ['api'], confidential: '1' },
      }],
      ['/users/sign_in', { cookie: `_service_csrf=${preSession}` }, {
        authenticity_token: preCsrf, user: { login: 'root', password: 'x' }, return_to: '/x',
      }],
      [`/profile/applications/${client.application.id}/renew`, { cookie }, { authenticity_token: csrf }],
    ];
    const leavesOf = (o: Record<string, unknown>, prefix: string[] = []): string[][] => Object.entries(o).flatMap(([k, v]) =>
      (v && typeof v === 'object' && !Array.isArray(v) ? leavesOf(v as Record<string, unknown>, [...prefix, k]) : [[...prefix, k]]));
    const setAt = (root: any, path: string[], value: unknown): any =>
      (path.length === 0 ? value : { ...root, [path[0]!]: setAt(root?.[path[0]!], path.slice(1), value) });
    // Some of these check a password (scrypt, tens of milliseconds): each field gets the values
    // that found failures before and a seeded sample of the rest.
    const always = new Set(['nul', 'lone high surrogate', '100 KB string', '2^31', 'object']);
    for (const [url, headers, body] of forms) {
      for (const leaf of leavesOf(body)) {
        const values = [
          ...JSON_VALUES.filter((v) => always.has(v.name)), ...pick(random, JSON_VALUES.filter((v) => !always.has(v.name)), 2),
        ];
        for (const h of values) {
          const res = await t.app.inject({
            method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' },
            payload: JSON.stringify(setAt(body, leaf, h.value)),
          });
          check(`POST ${url} ${leaf.join('.')} = ${h.name}`, res);
        }
      }
    }
    // Client credentials in HTTP Basic, each half form-encoded (RFC 6749 §2.3.1).
    const halves = ['%00', 'a%00b', '%ED%A0%80', '%FF', ...HOSTILE_IDS, incompressible(3000)];
    for (const half of halves) {
      for (const [id, secret] of [[half, client.secret], [client.clientId, half]]) {
        const authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
        for (const [url, form] of [['/oauth/token', 'grant_type=password&username=root&password=x'], ['/oauth/revoke', 'token=x']]) {
          const headers = { authorization, 'content-type': 'application/x-www-form-urlencoded' };
          const res = await t.app.inject({ method: 'POST', url, headers, payload: form });
          check(`POST ${url} with client ${id.slice(0, 20)}:${secret.slice(0, 20)}`, res);
        }
      }
      const nulBasic = `Basic ${Buffer.concat([Buffer.from('a\u0000b:'), Buffer.from(half)]).toString('base64')}`;
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { authorization: nulBasic }, payload: {} });
      check('POST /oauth/token with a NUL in the Basic user', res);
    }
    // Path ids of the pages, and ids in the authorization request's query.
    for (const segment of SEGMENTS) {
      for (const [method, suffix] of [['GET', ''], ['POST', '/renew'], ['POST', '/delete']]) {
        const res = await t.app.inject({
          method: method as 'GET', url: `/profile/applications/${segment}${suffix}`,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          ...(method === 'POST' ? { payload: `authenticity_token=${encodeURIComponent(csrf)}` } : {}),
        });
        check(`${method} /profile/applications/${segment.slice(0, 30)}${suffix}`, res, namesNothing);
      }
      check(`GET avatar of user ${segment.slice(0, 30)}`, await t.app.inject({ url: `/uploads/-/system/user/avatar/${segment}/a.png` }));
      check(`GET /oauth/authorize?client_id=${segment.slice(0, 30)}`, await t.app.inject({
        url: `/oauth/authorize?client_id=${segment}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=api`,
        headers: { cookie },
      }));
    }
    finish('OAuth and pages', started);
  });
});
