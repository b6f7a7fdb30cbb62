/**
 * Pipelines from a pushed .gitlab-ci.yml (CONTRACT §4; issue 6): creation and its errors in the
 * Service's shape, the real commit on every job, listing and showing pipelines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN } from '../helpers/test-runner.ts';

const CONFIG = `
stages: [build, test, deploy]
variables:
  GLOBAL: "yes"
build:
  stage: build
  script: echo build
test:
  stage: test
  script: [echo test]
deploy:
  stage: deploy
  script: echo deploy
`;

describe('CI pipelines', () => {
  let t: TestApp;
  let p: CiProject;
  let sha: string;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    sha = await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG }, { message: 'Add the pipeline\n\nFirst stage builds.' });
  });
  after(async () => { await t.close(); });

  const post = (ref: string | null, token = p.ownerToken, projectId = p.project.id) => t.request({
    method: 'POST', url: `/api/v4/projects/${projectId}/pipeline${ref === null ? '' : `?ref=${encodeURIComponent(ref)}`}`, token,
  });

  it('creates a pipeline and its jobs from the configuration at the ref, the first stage pending', async () => {
    const res = await post('main');
    assert.equal(res.statusCode, 201, res.body);
    const pipeline = res.json();
    assert.equal(pipeline.ref, 'main');
    assert.equal(pipeline.sha, sha);
    assert.equal(pipeline.status, 'pending');
    assert.equal(pipeline.source, 'api');
    assert.equal(pipeline.tag, false);
    assert.equal(pipeline.user.id, p.owner.id);
    assert.equal(pipeline.web_url, `http://kiln.test/${p.fullPath}/-/pipelines/${pipeline.id}`);
    assert.equal(pipeline.detailed_status.group, 'pending');
    const jobs = await pipelineJobs(t, p, pipeline.id);
    assert.deepEqual(jobs.map((j) => [j.name, j.stage, j.status]), [['deploy', 'deploy', 'created'], ['test', 'test', 'created'], ['build', 'build', 'pending']]);
    const rows = await t.db.selectFrom('ci_builds').select(['name', 'status']).where('pipeline_id', '=', pipeline.id).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => r.status), ['pending', 'created', 'created']);
  });

  it('gives every job the real commit read from git', async () => {
    const { id } = (await post('main')).json();
    const [job] = await pipelineJobs(t, p, id);
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}`, token: p.ownerToken });
    const commit = res.json().commit;
    assert.equal(commit.id, sha);
    assert.match(commit.id, /^[0-9a-f]{40}$/);
    assert.equal(commit.short_id, sha.slice(0, 8));
    assert.equal(commit.title, 'Add the pipeline');
    assert.equal(commit.message, 'Add the pipeline\n\nFirst stage builds.\n');
    assert.equal(commit.author_name, 'Ada Lovelace');
    assert.equal(commit.author_email, 'ada@example.com');
    assert.match(commit.created_at, /^\d{4}-\d{2}-\d{2}T/);
    assert.deepEqual(res.json().pipeline, { ...res.json().pipeline, id, sha, ref: 'main', project_id: p.project.id });
  });

  it('runs tag pipelines at the tag', async () => {
    const tagSha = await pushFiles(t, p, { 'VERSION': '1.0\n' }, { tag: 'v1.0' });
    const res = await post('v1.0');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().tag, true);
    assert.equal(res.json().sha, tagSha);
    const [job] = await pipelineJobs(t, p, res.json().id);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}`, token: p.ownerToken })).json().tag, true);
  });

  it('answers 400 for a missing ref, an unknown ref and a missing configuration', async () => {
    const missing = await post(null);
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: '400 Bad request - "ref" not given' });
    const unknown = await post('no-such-branch');
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), { message: { base: ['Reference not found'] } });
    const other = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, other, { 'README.md': 'no CI here\n' });
    const none = await post('main', p.ownerToken, other.project.id);
    assert.deepEqual(none.json(), { message: { base: ['Missing CI config file'] } });
  });

  const configErrors: [string, string, string][] = [
    ['a YAML syntax error', 'build:\n  script: [a\n  stage: b: c\n', 'Flow sequence in block collection must be sufficiently indented'],
    ['a document that is not a hash', '- a\n- b\n', 'Invalid configuration format'],
    ['no visible job', '.hidden:\n  script: x\n', 'jobs config should contain at least one visible job'],
    ['a job without script or trigger', 'build:\n  stage: build\n', 'jobs:build config should implement a script: or a trigger: keyword'],
    ['unknown job keys', 'build:\n  script: x\n  colour: red\n', 'jobs:build config contains unknown keys: colour'],
    ['an unknown stage', 'build:\n  stage: nope\n  script: x\n', 'build job: chosen stage does not exist; available stages are .pre, build, test, deploy, .post'],
    ['a bad when', 'build:\n  script: x\n  when: sometimes\n', 'jobs:build when should be one of: on_success, on_failure, always, manual'],
    ['an undefined need', 'build:\n  script: x\n  needs: [ghost]\n', 'build job: undefined need: ghost'],
    ['a need in a later stage', 'a:\n  stage: build\n  script: x\n  needs: [b]\nb:\n  stage: test\n  script: x\n', 'a job: need b is not defined in current or prior stages'],
    ['bad stages', 'stages: build\nbuild:\n  script: x\n', 'stages config should be an array of strings'],
    ['bad variables', 'variables: [a]\nbuild:\n  script: x\n', 'variables config should be a hash of key value pairs, value can be a hash'],
    ['bad tags', 'build:\n  script: x\n  tags: linux\n', 'jobs:build tags should be an array of strings'],
    ['a bad expire_in', 'build:\n  script: x\n  artifacts:\n    paths: [a]\n    expire_in: soon\n', 'jobs:build:artifacts expire in should be a duration'],
    ['unknown artifacts keys', 'build:\n  script: x\n  artifacts:\n    path: [a]\n', 'jobs:build:artifacts config contains unknown keys: path'],
    ['a script on a bridge', 'child:\n  trigger:\n    include: child.yml\n  script: x\n', 'jobs:child config contains unknown keys: script'],
    ['a missing local include', 'include: ci/base.yml\nbuild:\n  script: x\n', 'Local file `ci/base.yml` does not exist!'],
    ['an unknown extends', 'build:\n  extends: .base\n  script: x\n', '`build`: unknown keys in `extends` (.base)'],
  ];
  for (const [what, yaml, message] of configErrors) {
    it(`answers 400 with the configuration error for ${what}`, async () => {
      const branch = `bad-${configErrors.findIndex((c) => c[0] === what)}`;
      await pushFiles(t, p, { '.gitlab-ci.yml': yaml }, { branch });
      const res = await post(branch);
      assert.equal(res.statusCode, 400, res.body);
      const body = res.json() as { message: { base: string[] } };
      assert.equal(body.message.base.length, 1);
      assert.ok(body.message.base[0].startsWith(message), `${body.message.base[0]} should start with ${message}`);
      assert.equal((await t.db.selectFrom('ci_pipelines').select('id').where('ref', '=', branch).execute()).length, 0);
    });
  }

  it('reads local includes and extends', async () => {
    await pushFiles(t, p, {
      'ci/base.yml': '.base:\n  stage: test\n  script: echo base\n  tags: [linux]\n',
      '.gitlab-ci.yml': 'include:\n  - local: ci/base.yml\nunit:\n  extends: .base\n  variables: {A: "1"}\n',
    }, { branch: 'includes' });
    const res = await post('includes');
    assert.equal(res.statusCode, 201, res.body);
    const job = (await t.db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', res.json().id).executeTakeFirstOrThrow());
    assert.equal(job.name, 'unit');
    assert.equal(job.stage, 'test');
    assert.equal(job.tag_list, 'linux');
    assert.deepEqual(JSON.parse(job.options).script, ['echo base']);
  });

  it('lets developers create pipelines, not reporters, and hides private projects', async () => {
    const reporter = await createUser(t.db);
    const developer = await createUser(t.db);
    for (const [u, level] of [[reporter, 20], [developer, 30]] as const) {
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: u.id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
    assert.equal((await post('main', await createToken(t.db, reporter))).statusCode, 403);
    assert.equal((await post('main', await createToken(t.db, developer))).statusCode, 201);
    const stranger = await createToken(t.db, await createUser(t.db));
    const hidden = await post('main', stranger);
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main` })).statusCode, 401);
  });

  it('lists pipelines newest first with status, ref and scope filters, and shows one', async () => {
    const list = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines?per_page=2`, token: p.ownerToken });
    assert.equal(list.statusCode, 200, list.body);
    const ids = list.json().map((x: { id: number }) => x.id);
    assert.equal(ids.length, 2);
    assert.ok(ids[0] > ids[1]);
    assert.equal(list.headers['x-next-page'], '2');
    assert.deepEqual(Object.keys(list.json()[0]).sort(), ['created_at', 'id', 'iid', 'project_id', 'ref', 'sha', 'source', 'status', 'updated_at', 'web_url']);
    const tags = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines?ref=v1.0`, token: p.ownerToken });
    assert.deepEqual(tags.json().map((x: { ref: string }) => x.ref), ['v1.0']);
    const byStatus = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines?status=success`, token: p.ownerToken });
    assert.deepEqual(byStatus.json(), []);
    const bad = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines?status=great`, token: p.ownerToken });
    assert.deepEqual(bad.json(), { error: 'status does not have a valid value' });
    const one = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${ids[0]}`, token: p.ownerToken });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().id, ids[0]);
    assert.equal(one.json().before_sha, '0'.repeat(40));
    const missing = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/999999`, token: p.ownerToken });
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
  });
});
