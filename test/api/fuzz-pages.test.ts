/**
 * The fuzzer outside /api/v4 (issue 13): sign-in and profile pages, OAuth and git's smart HTTP,
 * whose routes the OpenAPI document does not list. Every parameter gets the values of
 * test/helpers/fuzz.ts, every path segment hostile ones, every form route the bad bodies; no
 * answer may be a 5xx. FUZZ_SEED replays a run, as for fuzz-openapi.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { ALWAYS, formText, PATH_SEGMENTS, pick, ROUTE_CASES, SAMPLED, seededRandom } from '../helpers/fuzz.ts';
import { createCiProject } from '../helpers/ci.ts';
import { createSession, createToken } from '../helpers/factories.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { registerClient } from '../helpers/oauth.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const SAMPLED_PER_PARAM = process.env.FUZZ_CASES === 'all' ? SAMPLED.length : Number(process.env.FUZZ_CASES ?? 6);

interface Failure {
  what: string;
  status: number | string;
  body: string;
}

describe(`fuzzing the pages, OAuth and git (FUZZ_SEED=${SEED})`, () => {
  let t: TestApp;
  let repo: string;
  before(async () => {
    t = await startTestApp();
    repo = (await createCiProject(t)).fullPath;
  });
  after(async () => { await t.close(); });

  it('answers hostile requests outside /api/v4 (sign-in, OAuth, profile pages, git) below 500', async () => {
    const random = seededRandom(SEED);
    const root = await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const session = await createSession(t.db, root);
    const csrf = csrfTokenFor(t.app.kiln.secretKeyBase, session);
    const client = await registerClient(t, { ownerId: 1 });
    const rootToken = await createToken(t.db, root);
    const cookie = `_service_session=${session}`;
    const basic = `Basic ${Buffer.from(`root:${rootToken}`).toString('base64')}`;
    // method, path template, parameters (as a query for GET and DELETE, a form otherwise), headers.
    const pages: [string, string, Record<string, string>, Record<string, string>][] = [
      ['GET', '/users/sign_in', { return_to: '/profile/applications' }, {}],
      ['POST', '/users/sign_in', { 'user[login]': 'root', 'user[password]': 'x', authenticity_token: 'x', return_to: '/x' }, {}],
      ['POST', '/users/sign_out', { authenticity_token: csrf }, { cookie }],
      ['GET', '/oauth/authorize', { client_id: client.clientId, redirect_uri: 'https://client.example/callback', response_type: 'code', scope: 'api', state: 's', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256', nonce: 'n' }, { cookie }],
      ['POST', '/oauth/authorize', { client_id: client.clientId, redirect_uri: 'https://client.example/callback', response_type: 'code', scope: 'api', state: 's', authenticity_token: csrf }, { cookie }],
      ['DELETE', '/oauth/authorize', { client_id: client.clientId, redirect_uri: 'https://client.example/callback', response_type: 'code', scope: 'api', state: 's', authenticity_token: csrf }, { cookie }],
      ['POST', '/oauth/token', { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://client.example/callback', client_id: client.clientId, client_secret: client.secret, code_verifier: 'v' }, {}],
      ['POST', '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: client.clientId, client_secret: client.secret, scope: 'api' }, {}],
      ['POST', '/oauth/token', { grant_type: 'password', username: 'root', password: 'x', client_id: client.clientId, client_secret: client.secret, scope: 'api' }, {}],
      ['POST', '/oauth/revoke', { token: 'x', token_type_hint: 'access_token', client_id: client.clientId, client_secret: client.secret }, {}],
      ['GET', '/oauth/token/info', { access_token: 'x' }, {}],
      ['GET', '/oauth/userinfo', { access_token: 'x' }, {}],
      ['POST', '/oauth/userinfo', { access_token: 'x' }, {}],
      ['GET', '/.well-known/openid-configuration', { x: 'y' }, {}],
      ['GET', '/oauth/discovery/keys', { x: 'y' }, {}],
      ['GET', '/profile/applications', { x: 'y' }, { cookie }],
      ['POST', '/profile/applications', { 'doorkeeper_application[name]': 'n', 'doorkeeper_application[redirect_uri]': 'https://a.example/cb', 'doorkeeper_application[scopes][]': 'api', authenticity_token: csrf }, { cookie }],
      ['GET', '/profile/applications/{id}', { x: 'y' }, { cookie }],
      ['POST', '/profile/applications/{id}/renew', { authenticity_token: csrf }, { cookie }],
      ['GET', `/${repo}.git/info/refs`, { service: 'git-upload-pack' }, { authorization: basic }],
      ['POST', `/${repo}.git/git-upload-pack`, { x: 'y' }, { authorization: basic }],
      ['GET', `/${repo}/badges/feature/x/pipeline.svg`, { ignore_skipped: 'true', key_text: 'k', key_width: '80', style: 'flat-square' }, { authorization: basic }],
      ['GET', `/${repo}/badges/main/coverage.svg`, { job: 'test', key_text: 'k', key_width: '80', min_good: '90', min_acceptable: '80', min_medium: '70', style: 'flat' }, { authorization: basic }],
      // The web interface's pages (issue 33), signed in and not.
      ['GET', '/', { page: '2' }, { cookie }],
      ['GET', '/explore/projects', { search: 'x', page: '2' }, {}],
      ['GET', '/explore/groups', { search: 'x', page: '2' }, { cookie }],
      ['GET', `/${repo}`, { x: 'y' }, {}],
      ['GET', `/${repo}/-/tree/main/src`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/blob/main/.gitlab-ci.yml`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/raw/main/.gitlab-ci.yml`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/commits/main`, { page: '2' }, { cookie }],
      ['GET', `/${repo}/-/commit/main`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/branches`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/tags`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/issues`, {
        state: 'all', search: 'x', 'label_name[]': 'bug', milestone_title: 'm', author_username: 'root', assignee_username: 'None', sort: 'title_asc',
        page: '2',
      }, { cookie }],
      ['POST', `/${repo}/-/issues`, { title: 't', description: 'd', labels: 'a,b', confidential: 'true', authenticity_token: csrf }, { cookie }],
      ['GET', `/${repo}/-/issues/1`, { x: 'y' }, { cookie }],
      ['POST', `/${repo}/-/issues/1/notes`, { note: 'n', discussion_id: 'd', internal: 'true', authenticity_token: csrf }, { cookie }],
      ['POST', `/${repo}/-/issues/1/close`, { authenticity_token: csrf }, { cookie }],
      ['GET', `/${repo}/-/labels`, { search: 'x', page: '2' }, { cookie }],
      ['GET', `/${repo}/-/milestones`, { state: 'all' }, { cookie }],
      ['GET', `/${repo}/-/milestones/1`, { x: 'y' }, { cookie }],
      ['GET', '/groups/nope/-/issues', { search: 'x', sort: 'popularity' }, { cookie }],
      ['GET', `/${repo}/-/blame/main/.gitlab-ci.yml`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/jobs/1/artifacts/browse/out`, { x: 'y' }, { cookie }],
      ['GET', '/users/sign_up', { x: 'y' }, {}],
      ['POST', '/users', { 'new_user[name]': 'n', 'new_user[username]': 'u', 'new_user[email]': 'e@example.com', 'new_user[password]': 'p', authenticity_token: 'x' }, {}],
      ['GET', '/-/profile', { x: 'y' }, { cookie }],
      ['POST', '/-/profile/emails', { email: 'fuzz@example.com', authenticity_token: csrf }, { cookie }],
      ['POST', '/-/profile/preferences', { view_diffs_file_by_file: '1', show_whitespace_in_diffs: '1', authenticity_token: csrf }, { cookie }],
      ['GET', '/-/broadcast_messages.css', { v: 'x' }, {}],
      ['GET', `/${repo}/-/merge_requests`, {
        state: 'opened', search: 'x', 'label_name[]': 'a', milestone_title: 'm', author_username: 'root', assignee_username: 'root',
        reviewer_username: 'root', target_branch: 'main', sort: 'title_asc', page: '2',
      }, { cookie }],
      ['GET', `/${repo}/-/merge_requests/new`, { source_branch: 'main', target_branch: 'main' }, { cookie }],
      ['POST', `/${repo}/-/merge_requests/new`, { authenticity_token: csrf, source_branch: 'main', target_branch: 'x', title: 't', description: 'd' }, { cookie }],
      ['GET', `/${repo}/-/merge_requests/1/diffs`, { page: '2', file: '0' }, { cookie }],
      ['POST', `/${repo}/-/merge_requests/1/notes`, { authenticity_token: csrf, note: 'n', thread: 'true' }, { cookie }],
      ['GET', `/${repo}/-/merge_requests/1/diffs`, { line_code: '0_1_1', page: '1' }, { cookie }],
      ['POST', `/${repo}/-/merge_requests/1/diff_note`, {
        authenticity_token: csrf, note: 'n', base_sha: 'a'.repeat(40), start_sha: 'a'.repeat(40), head_sha: 'b'.repeat(40),
        old_path: 'a.txt', new_path: 'a.txt', old_line: '1', new_line: '1',
      }, { cookie }],
      ['POST', `/${repo}/-/merge_requests/1/merge`, { authenticity_token: csrf, merge_when_pipeline_succeeds: 'true', sha: 'a'.repeat(40) }, { cookie }],
      ['POST', `/${repo}/-/merge_requests/1/cancel_auto_merge`, { authenticity_token: csrf }, { cookie }],
      // The pages behind the links the API, hooks and notifications hand out (linked-pages.test.ts).
      ['GET', `/${repo}/-/tags/v1.0`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/snippets/1/raw/main/a.txt`, { page: '2' }, { cookie }],
      ['GET', `/${repo}/-/releases/v1.0/downloads/bin/app`, { page: '2' }, { cookie }],
      ['GET', `/${repo}/-/wikis/dir/page`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/environments/1`, { scope: 'stopped', page: '2' }, { cookie }],
      ['GET', `/${repo}/-/project_members`, { page: '2' }, {}],
      ['GET', `/${repo}/-/compare/main...feature/x`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/archive/main/project-main.tar.gz`, { x: 'y' }, { cookie }],
      ['GET', `/${repo}/-/pipelines/1/failures`, { x: 'y' }, { cookie }],
      ['GET', '/groups/some/group/-/group_members', { page: '2' }, { cookie }],
      ['GET', '/-/snippets/1/raw/main/dir/a.txt', { x: 'y' }, { cookie }],
      ['GET', '/api/v4/user', { private_token: rootToken, sudo: '1' }, {}],
      ['GET', '/api/v3/user', { private_token: rootToken }, {}],
    ];
    let count = 0;
    const failures: Failure[] = [];
    const started = performance.now();
    const send = async (what: string, method: string, url: string, headers: Record<string, string>, payload?: string) => {
      count += 1;
      const res = await t.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
      if (res.statusCode >= 500) failures.push({ what, status: res.statusCode, body: res.body.slice(0, 200) });
    };
    for (const [method, template, params, headers] of pages) {
      const path = template.replace('{id}', String(client.application.id));
      const formSend = method !== 'GET' && method !== 'DELETE';
      const go = (what: string, url: string, fuzzed?: string) => {
        const text = formText(params, fuzzed);
        return formSend
          ? send(what, method, url, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, text)
          : send(what, method, `${url}?${text}`, headers);
      };
      for (const key of Object.keys(params)) {
        const rest = { ...params };
        delete rest[key];
        for (const value of [...ALWAYS, ...pick(random, SAMPLED, SAMPLED_PER_PARAM)].filter((v) => v.query)) {
          const text = formText(rest, value.query!(key));
          await (formSend
            ? send(`${method} ${template}: ${key} = ${value.name}`, method, path, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, text)
            : send(`${method} ${template}: ${key} = ${value.name}`, method, `${path}?${text}`, headers));
        }
      }
      // Every path segment, and the whole path, replaced by hostile ones.
      const segments = path.split('/');
      for (let i = 1; i < segments.length; i++) {
        for (const segment of ['%00', ...pick(random, PATH_SEGMENTS, 3)]) {
          const changed = [...segments];
          changed[i] = segment;
          await go(`${method} ${template}: segment ${i} = ${segment.slice(0, 20)}`, changed.join('/'));
        }
      }
      for (const c of ROUTE_CASES) {
        if (c.body !== undefined && method !== 'GET') await send(`${method} ${template}: ${c.name}`, method, path, { ...headers, ...(c.contentType ? { 'content-type': c.contentType } : {}) }, String(c.body));
      }
    }
    console.log(`fuzz outside /api/v4 (${t.dialect}): seed ${SEED}, ${count} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const report = failures.slice(0, 60).map((f) => `${f.status} ${f.what}\n    ${f.body}`).join('\n');
    assert.equal(failures.length, 0, `${failures.length} failures (FUZZ_SEED=${SEED}):\n${report}`);
  });
});
