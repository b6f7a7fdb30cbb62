/**
 * No path with a static segment is swallowed by another resource's parameter (issue 35, item 5).
 *
 * Before this test, `GET /projects/:id/members/all` reached `/projects/:id/members/:user_id`
 * (`400 user_id is invalid`) and `POST /projects/remote-import` reached the not-found handler's 405
 * through `/projects/:id`'s other methods. The test walks the route table (`app.routeTable`, every
 * route kiln registered) and the Service's own static paths that sit where kiln has a parameter
 * (SERVICE_STATIC_PATHS, from the Service 15.2's lib/api). For each such path, declared with a
 * method M, and each static segment of it at position i, a route with a parameter at i and the
 * same segments elsewhere would catch it. That is allowed only for the methods the static path
 * does not have (the Service's Grape router sends those to the parameter's route too). So:
 * - M itself: kiln's router must pick the static path's own route, or no route at all;
 * - a path kiln does not serve must then get the Service's catch-all `404 Not Found`, whatever
 *   methods other routes have there (no 405, no handler of another resource).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { RouteOptions } from 'fastify';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Paths of the Service 15.2 (Community Edition) with a static segment where some route has a
 * parameter, under /api/v4, with the file that declares each. Whether kiln serves them or not.
 */
const SERVICE_STATIC_PATHS: [method: HTTPMethod, path: string, declaredIn: string][] = [
  ['GET', '/projects/:id/members/all', 'lib/api/members.rb'],
  ['GET', '/projects/:id/members/all/:user_id', 'lib/api/members.rb'],
  ['GET', '/groups/:id/members/all', 'lib/api/members.rb'],
  ['GET', '/groups/:id/members/all/:user_id', 'lib/api/members.rb'],
  ['POST', '/projects/import', 'lib/api/project_import.rb'],
  ['POST', '/projects/import/authorize', 'lib/api/project_import.rb'],
  ['POST', '/projects/remote-import', 'lib/api/project_import.rb'],
  ['POST', '/projects/user/:user_id', 'lib/api/projects.rb'],
  ['POST', '/groups/import', 'lib/api/group_import.rb'],
  ['POST', '/groups/import/authorize', 'lib/api/group_import.rb'],
  ['GET', '/snippets/public', 'lib/api/snippets.rb'],
  ['GET', '/runners/all', 'lib/api/ci/runners.rb'],
  ['DELETE', '/projects/:id/environments/review_apps', 'lib/api/environments.rb'],
  ['POST', '/projects/:id/environments/stop_stale', 'lib/api/environments.rb'],
  ['POST', '/runners/reset_registration_token', 'lib/api/ci/runners.rb'],
  ['POST', '/runners/verify', 'lib/api/ci/runner.rb'],
  ['POST', '/jobs/request', 'lib/api/ci/runner.rb'],
  ['DELETE', '/personal_access_tokens/self', 'lib/api/personal_access_tokens/self_information.rb'],
  ['GET', '/projects/:id/pipelines/latest', 'lib/api/ci/pipelines.rb'],
  ['GET', '/projects/:id/jobs/artifacts/:ref_name/download', 'lib/api/ci/job_artifacts.rb'],
  ['GET', '/projects/:id/jobs/artifacts/:ref_name/raw/*', 'lib/api/ci/job_artifacts.rb'],
  ['POST', '/projects/:id/runners/reset_registration_token', 'lib/api/ci/runners.rb'],
  ['POST', '/groups/:id/runners/reset_registration_token', 'lib/api/ci/runners.rb'],
];

const API = '/api/v4';
const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** `:name(regex)` and `*` are parameters; everything else is a static segment. */
const isParam = (segment: string) => segment.startsWith(':') || segment === '*';
const segmentsOf = (url: string) => url.split('/').slice(1);
/** The shape of a path: parameters renamed alike, so that two declarations of one path compare equal. */
const shape = (url: string) => segmentsOf(url).map((s) => (isParam(s) ? (s === '*' ? '*' : ':') : s)).join('/');
/** A concrete path for a declared one: each parameter becomes `1` (every id constraint takes it). */
const sample = (url: string) => `/${segmentsOf(url).map((s) => (isParam(s) ? '1' : s)).join('/')}`;

interface Declared { method: HTTPMethod; url: string; from: string }

/**
 * Whether `route` would match `path` with one of its parameters (or its trailing wildcard) taking
 * a segment that is static in `path`.
 */
function catchesStatic(route: string[], path: string[]): boolean {
  let tookStatic = false;
  for (let j = 0; j < path.length; j += 1) {
    if (route[j] === '*') return tookStatic || path.slice(j).some((s) => !isParam(s));
    if (route[j] === undefined) return false;
    if (isParam(route[j])) tookStatic ||= !isParam(path[j]);
    else if (isParam(path[j]) || route[j] !== path[j]) return false;
  }
  return route.length === path.length && tookStatic;
}

describe('route table: no static segment swallowed by a parameter', () => {
  let t: TestApp;
  let routes: RouteOptions[];

  before(async () => {
    t = await startTestApp();
    routes = (t.app as unknown as { routeTable: RouteOptions[] }).routeTable;
  });
  after(async () => { await t?.close(); });

  function methodsOf(route: RouteOptions): HTTPMethod[] {
    return (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
  }

  it('lists the Service\'s static paths with methods and paths this test understands', () => {
    for (const [method, path] of SERVICE_STATIC_PATHS) {
      assert.ok(METHODS.includes(method), method);
      assert.ok(segmentsOf(path).some((s) => !isParam(s)), path);
    }
    assert.ok(routes.length > 100, 'the route table holds every route');
  });

  it('answers every static path with its own route or with the Service\'s catch-all 404', async () => {
    const router = FindMyWay({ ignoreTrailingSlash: false, maxParamLength: 1000 });
    const api: Declared[] = [];
    for (const route of routes) {
      for (const method of methodsOf(route)) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        try {
          router.on(method, route.url, () => undefined, { url: route.url });
        } catch {
          // A path declared twice (another constraint) needs no second entry.
        }
        if (route.url.startsWith(`${API}/`)) {
          api.push({ method, url: route.url.slice(API.length), from: `kiln ${route.config?.source ?? ''}` });
        }
      }
    }
    const service = SERVICE_STATIC_PATHS.map(([method, url, from]) => ({ method, url, from: `the Service's ${from}` }));
    const declared: Declared[] = [...api, ...service];
    const served = new Set(api.map((d) => `${d.method} ${shape(d.url)}`));
    const problems: string[] = [];

    for (const d of declared) {
      const path = segmentsOf(d.url);
      // Every route that has a parameter where this path has a static segment, under any method.
      const catchers = api.filter((r) => catchesStatic(segmentsOf(r.url), path));
      if (catchers.length === 0) continue;
      const found = router.find(d.method, `${API}${sample(d.url)}`) as { store?: { url: string } } | null;
      const own = served.has(`${d.method} ${shape(d.url)}`);
      const picked = found?.store?.url.slice(API.length);
      if (picked !== undefined && shape(picked) !== shape(d.url)) {
        problems.push(`${d.method} ${d.url} (${d.from}) is answered by ${d.method} ${picked}`);
        continue;
      }
      if (own) continue;
      // Not served: other methods' routes catch the path; the answer must still be the catch-all.
      const res = await t.request({
        method: d.method, url: `${API}${sample(d.url)}`, token: ROOT_TOKEN, payload: d.method === 'GET' ? undefined : {},
      });
      const body = res.headers['content-type']?.startsWith('application/json') ? res.json() : res.body;
      if (res.statusCode !== 404 || JSON.stringify(body) !== JSON.stringify({ error: '404 Not Found' })) {
        const by = catchers.map((c) => `${c.method} ${c.url}`).join(', ');
        problems.push(`${d.method} ${d.url} (${d.from}) answers ${res.statusCode} ${JSON.stringify(body)} through ${by}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
