/**
 * The schema-driven fuzzer (issue 13): every operation of /api/v4/openapi.json, with path ids of
 * objects made first, receives hostile values per parameter, per path segment and per request
 * (test/helpers/fuzz.ts). Every answer must be below 500, an error must have a JSON body, and the
 * server must still answer afterwards. A route added later is in the document, so it is fuzzed
 * without a test of its own.
 *
 * Seeded: the seed is printed; FUZZ_SEED=<n> replays a run, FUZZ_ONLY=<substring of the path>
 * narrows it to some routes, FUZZ_CASES=<n|all> sets how many sampled values each parameter gets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { ALWAYS, formText, PATH_SEGMENTS, pick, ROUTE_CASES, SAMPLED, seededRandom, type FuzzValue } from '../helpers/fuzz.ts';
import { seedFuzzObjects, type FuzzObjects } from '../helpers/fuzz-objects.ts';
import { REGISTRATION_TOKEN } from '../helpers/test-runner.ts';
import { createToken, createUser } from '../helpers/factories.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const SAMPLED_PER_PARAM = process.env.FUZZ_CASES === 'all' ? SAMPLED.length : Number(process.env.FUZZ_CASES ?? 6);
const PATHS_PER_PARAM = 5;
const ONLY = process.env.FUZZ_ONLY;
/** A request that has not been answered in this long counts as the server no longer answering. */
const ANSWER_WITHIN_MS = 15_000;

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  /** Declared parameters other than the path's, with their schemas. */
  params: Record<string, any>;
  required: string[];
  inBody: boolean;
}

interface Failure {
  what: string;
  status: number | string;
  body: string;
  logged?: string;
}

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const pathParams: string[] = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      const params: Record<string, any> = {};
      const required: string[] = [];
      for (const p of op.parameters ?? []) {
        if (p.in !== 'query' || pathParams.includes(p.name)) continue;
        params[p.name] = p.schema ?? {};
        if (p.required) required.push(p.name);
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const [name, schema] of Object.entries<any>(body?.properties ?? {})) {
        if (pathParams.includes(name)) continue;
        params[name] = schema;
        if (body.required?.includes(name)) required.push(name);
      }
      ops.push({ method: method.toUpperCase(), path, pathParams, params, required, inBody: body !== undefined });
    }
  }
  // Reads first, then writes, deletions last and the deepest first, so that the objects a path
  // names live as long as possible.
  const rank = (o: Operation) => (o.method === 'GET' ? 0 : o.method === 'DELETE' ? 2 : 1);
  return ops.sort((a, b) => rank(a) - rank(b) || (rank(a) === 2 ? b.path.split('/').length - a.path.split('/').length : 0));
}

/** Parameter names a 400 says are missing: `"x" not given` or `x, y are missing, at least one …`. */
function missingNames(body: string): string[] {
  let text = '';
  try {
    const parsed = JSON.parse(body);
    text = typeof parsed.error === 'string' ? parsed.error : typeof parsed.message === 'string' ? parsed.message : '';
  } catch {
    return [];
  }
  const notGiven = /"([^"]+)" not given/.exec(text);
  if (notGiven) return [notGiven[1]];
  const oneOf = /([\w, ]+?) are missing, at least one parameter must be provided/.exec(text);
  return oneOf ? oneOf[1].split(', ').map((n) => n.trim()) : [];
}

let unique = 0;
/** A plausible valid value for a parameter, so that the fuzzed one is what the route judges. */
function validValue(name: string, schema: any, objects: FuzzObjects): unknown {
  unique += 1;
  if (schema.enum) return schema.enum[0];
  if (schema.type === 'array') return schema.items?.enum ? [schema.items.enum[0]] : [];
  if (schema.type === 'boolean') return false;
  if (schema.type === 'integer' || schema.type === 'number') return objects.idFor(name, '') ?? 1;
  if (schema.type === 'object') return {};
  if (schema.format === 'date') return '2030-01-01';
  if (schema.format === 'date-time') return '2030-01-01T00:00:00Z';
  if (/email/.test(name)) return `fuzz${unique}@example.org`;
  if (name === 'password') return 'fuzz-password-123456';
  if (name === 'ref') return 'main';
  if (name === 'token') return REGISTRATION_TOKEN;
  if (name === 'scopes') return 'api';
  if (name === 'redirect_uri') return 'https://client.example/cb';
  return `fuzz${unique}`;
}

describe(`fuzzing every route of the OpenAPI document (FUZZ_SEED=${SEED})`, () => {
  let t: TestApp;
  let objects: FuzzObjects;
  const logs: string[] = [];
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => { logs.push(...chunk.toString().split('\n').filter(Boolean)); });
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN, LOG_LEVEL: 'error' }, { logStream });
    objects = await seedFuzzObjects(t);
  });
  after(async () => { await t.close(); });

  it('answers every hostile request below 500, errors as JSON, and keeps answering', async () => {
    const random = seededRandom(SEED);
    const doc = (await t.request({ url: '/api/v4/openapi.json' })).json();
    const ops = operations(doc).filter((o) => !ONLY || o.path.includes(ONLY));
    const failures: Failure[] = [];
    let count = 0;
    // Root's token, replaced when a route revokes it (DELETE /personal_access_tokens/self).
    let token = ROOT_TOKEN;
    const started = performance.now();

    async function send(
      what: string, opts: { method: string; url: string; headers?: Record<string, string>; payload?: string | Buffer }, as: string | null = token,
    ): Promise<LightMyRequestResponse | undefined> {
      count += 1;
      let res: LightMyRequestResponse | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        res = await Promise.race([
          t.request({ ...opts, ...(as ? { token: as } : {}) } as Parameters<TestApp['request']>[0]),
          new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ANSWER_WITHIN_MS); }),
        ]);
      } catch (err) {
        failures.push({ what, status: 'threw', body: String(err) });
        return undefined;
      } finally {
        clearTimeout(timer);
      }
      if (!res) {
        failures.push({ what, status: 'no answer', body: '' });
        return undefined;
      }
      if (res.statusCode >= 500) {
        const id = res.headers['x-request-id'];
        const logged = logs.find((l) => typeof id === 'string' && l.includes(`"reqId":"${id}"`));
        failures.push({ what, status: res.statusCode, body: res.body.slice(0, 300), logged: logged?.slice(0, 600) });
        return res;
      }
      if (res.statusCode >= 400 && opts.method !== 'HEAD') {
        try {
          JSON.parse(res.body);
          assert.match(String(res.headers['content-type']), /json/);
        } catch {
          failures.push({ what, status: res.statusCode, body: `not a JSON error body: ${res.body.slice(0, 200)}` });
        }
      }
      return res;
    }

    // Reads as other callers first: anonymous and a user without rights take other paths
    // (visibility filters, public lists) through the same parameters.
    const someone = await createToken(t.db, await createUser(t.db));
    for (const op of ops.filter((o) => o.method === 'GET')) {
      for (const [who, as] of [['anonymous', null], ['a user', someone]] as const) {
        const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(objects.pathValue(op.path, name))));
        const base = Object.fromEntries(op.required.map((name) => [name, validValue(name, op.params[name], objects)]));
        for (const key of Object.keys(op.params)) {
          const rest = { ...base };
          delete rest[key];
          for (const value of ALWAYS) {
            const text = formText(rest, value.query!(key));
            await send(`GET ${op.path} as ${who}: ${key} = ${value.name}`, { method: 'GET', url: `${url}?${text}` }, as);
          }
        }
      }
    }

    for (const op of ops) {
      const segments = Object.fromEntries(op.pathParams.map((name) => [name, encodeURIComponent(String(objects.pathValue(op.path, name)))]));
      const urlWith = (over: Record<string, string> = {}) =>
        op.path.replace(/\{([^}]+)\}/g, (_, name: string) => over[name] ?? segments[name]);
      const base: Record<string, unknown> = {};
      for (const name of op.required) base[name] = validValue(name, op.params[name], objects);
      const label = `${op.method} ${op.path}`;

      const request = (what: string, url: string, params: Record<string, unknown>, fuzzed?: { key: string; value: FuzzValue }) => {
        const useJson = op.inBody && (fuzzed === undefined || fuzzed.value.json !== undefined);
        if (op.inBody && useJson) {
          const body = fuzzed ? { ...params, [fuzzed.key]: fuzzed.value.json } : params;
          return send(what, { method: op.method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
        }
        const text = formText(params, fuzzed?.value.query?.(fuzzed.key));
        if (op.inBody) {
          return send(what, { method: op.method, url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: text });
        }
        return send(what, { method: op.method, url: text ? `${url}?${text}` : url });
      };

      // Grape's rules the document cannot express (at_least_one_of, a parameter required only
      // with another): the answer names what is missing, and the baseline gains it.
      for (let round = 0; round < 4; round++) {
        const res = await request(`${label} with valid values`, urlWith(), base);
        const missing = res?.statusCode === 400 ? missingNames(res.body).filter((n) => n in op.params && !(n in base)) : [];
        if (missing.length === 0) break;
        base[missing[0]] = validValue(missing[0], op.params[missing[0]], objects);
      }
      for (const key of Object.keys(op.params)) {
        const values = [...ALWAYS, ...pick(random, SAMPLED, SAMPLED_PER_PARAM)]
          .filter((v) => (op.inBody ? v.json !== undefined || v.query !== undefined : v.query !== undefined));
        const rest = { ...base };
        delete rest[key];
        for (const value of values) await request(`${label}: ${key} = ${value.name}`, urlWith(), rest, { key, value });
      }
      for (const name of op.pathParams) {
        for (const segment of ['%00', '2147483648', ...pick(random, PATH_SEGMENTS.slice(2), PATHS_PER_PARAM)]) {
          await request(`${label}: path ${name} = ${segment.slice(0, 40)}`, urlWith({ [name]: segment }), base);
        }
      }
      for (const c of ROUTE_CASES) {
        const url = c.query ? `${urlWith()}?${c.query}` : urlWith();
        if (c.body === undefined) await send(`${label}: ${c.name}`, { method: op.method, url });
        else if (op.method !== 'GET') {
          await send(`${label}: ${c.name}`, { method: op.method, url, headers: c.contentType ? { 'content-type': c.contentType } : {}, payload: c.body });
        }
      }
      let alive = await t.request({ url: '/api/v4/version', token });
      if (alive.statusCode === 401) {
        token = await createToken(t.db, await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow());
        alive = await t.request({ url: '/api/v4/version', token });
      }
      if (alive.statusCode !== 200) failures.push({ what: `server after ${label}`, status: alive.statusCode, body: alive.body.slice(0, 200) });
    }

    const seconds = (performance.now() - started) / 1000;
    console.log(`fuzz (${t.dialect}): seed ${SEED}, ${count} requests over ${ops.length} operations in ${seconds.toFixed(1)} s (FUZZ_SEED=${SEED} replays)`);
    const report = [
      ...failures.slice(0, 10).map((f) => `${f.status} ${f.what}\n    ${f.body}${f.logged ? `\n    log: ${f.logged}` : ''}`),
      ...failures.slice(10, 300).map((f) => `${f.status} ${f.what}`),
    ].join('\n');
    assert.equal(failures.length, 0, `${failures.length} failures (FUZZ_SEED=${SEED}):\n${report}`);
  });
});
