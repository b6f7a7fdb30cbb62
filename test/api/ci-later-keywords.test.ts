/**
 * Keywords the Service added after 15.2, at the HTTP boundary (issue 28, item 4): workflow:name
 * as the pipeline's `name`; `id_tokens` signed as JWTs a relying party verifies with kiln's
 * published keys, reaching the runner as masked variables; `artifacts:access` narrowing who may
 * download; `workflow:auto_cancel` `on_job_failure: all` and `on_new_commit: interruptible`;
 * `cache:fallback_keys` sent to the runner; `secrets` refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('CI keywords after 15.2 through the API and the runner protocol', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t, { visibility: 'public' });
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });

  async function pipelineOf(yaml: string) {
    await pushFiles(t, p, { '.gitlab-ci.yml': yaml });
    return createPipeline(t, p);
  }

  it('names the pipeline, signs id_tokens for the runner and sends fallback cache keys', async () => {
    const pipeline = await pipelineOf([
      'workflow: { name: "Build of $CI_COMMIT_REF_NAME" }',
      'job:',
      '  script: x',
      '  cache: { key: k, fallback_keys: [main-k] }',
      '  id_tokens:',
      '    VAULT_ID_TOKEN: { aud: "$CI_SERVER_URL" }',
      '    MANY: { aud: [a, b] }', '',
    ].join('\n'));
    const detail = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`, token: p.ownerToken })).json() as { name: string };
    assert.equal(detail.name, 'Build of main');
    const job = await runner.requestJob();
    const variable = (key: string) => job.variables.find((v) => v.key === key)!;
    assert.equal(variable('VAULT_ID_TOKEN').masked, true);
    assert.equal(variable('VAULT_ID_TOKEN').public, false);
    const jwks = (await t.request({ method: 'GET', url: '/oauth/discovery/keys' })).json() as Parameters<typeof createLocalJWKSet>[0];
    const { payload } = await jwtVerify(variable('VAULT_ID_TOKEN').value, createLocalJWKSet(jwks), {
      issuer: t.config.externalUrl, audience: t.config.externalUrl,
    });
    assert.equal(payload.project_path, p.fullPath);
    assert.equal(payload.job_id, String(job.id));
    assert.equal(payload.sub, `project_path:${p.fullPath}:ref_type:branch:ref:main`);
    assert.equal(payload.user_login, p.owner.username);
    const many = await jwtVerify(variable('MANY').value, createLocalJWKSet(jwks), { audience: 'b' });
    assert.deepEqual(many.payload.aud, ['a', 'b']);
    assert.deepEqual((job.cache as Array<{ key: string; fallback_keys: string[] }>)[0].fallback_keys, ['main-k']);
    await runner.update(job, 'success');
  });

  it('lets artifacts:access decide who downloads the archive', async () => {
    await pipelineOf([
      'open: { script: x, artifacts: { paths: [a] } }',
      'dev: { script: x, artifacts: { paths: [a], access: developer } }',
      'closed: { script: x, artifacts: { paths: [a], access: none } }', '',
    ].join('\n'));
    const ids: Record<string, number> = {};
    for (let i = 0; i < 3; i++) {
      const job = await runner.requestJob();
      assert.equal((await runner.uploadArtifact(job, await makeZip({ a: 'x' }))).statusCode, 201);
      await runner.update(job, 'success');
      ids[job.job_info.name] = job.id;
    }
    const reporter = await createUser(t.db);
    await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: reporter.id, access_level: 20 } });
    const reporterToken = await createToken(t.db, reporter, { scopes: ['api'] });
    const get = (name: string, token?: string) => t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${ids[name]}/artifacts`, token });
    assert.equal((await get('open')).statusCode, 200);
    assert.equal((await get('open', reporterToken)).statusCode, 200);
    assert.equal((await get('dev', reporterToken)).statusCode, 403);
    assert.equal((await get('dev', p.ownerToken)).statusCode, 200);
    assert.equal((await get('closed', p.ownerToken)).statusCode, 403);
  });

  it('on_job_failure: all cancels the rest once a job fails', async () => {
    const pipeline = await pipelineOf([
      'workflow: { auto_cancel: { on_job_failure: all } }',
      'a: { script: x }', 'b: { script: x }', 'c: { stage: deploy, script: x }', '',
    ].join('\n'));
    await runner.run('failed');
    assert.deepEqual(Object.values(await jobStatuses(t, p, pipeline.id)).sort(), ['canceled', 'canceled', 'failed']);
  });

  it('on_new_commit: interruptible cancels the older pipeline\'s interruptible jobs on a new commit', async () => {
    const yaml = (n: number) => [
      `# ${n}`, 'workflow: { auto_cancel: { on_new_commit: interruptible } }',
      'safe: { script: x, interruptible: true }', 'deploy: { script: x }', '',
    ].join('\n');
    const first = await pipelineOf(yaml(1));
    await pipelineOf(yaml(2));
    assert.deepEqual(await jobStatuses(t, p, first.id), { safe: 'canceled', deploy: 'pending' });
    // Nothing asked for it: kept.
    const plain = await pipelineOf('job: { script: x, interruptible: true }\n');
    await pipelineOf('job: { script: y, interruptible: true }\n');
    assert.deepEqual(await jobStatuses(t, p, plain.id), { job: 'pending' });
  });

  it('workflow:rules:auto_cancel of the matching rule overrides workflow:auto_cancel', async () => {
    const pipeline = await pipelineOf([
      'workflow:',
      '  auto_cancel: { on_job_failure: none }',
      '  rules:',
      '    - if: $CI_COMMIT_BRANCH == "main"',
      '      auto_cancel: { on_job_failure: all, on_new_commit: none }',
      'a: { script: x }', 'b: { script: x }', 'c: { stage: deploy, script: x }', '',
    ].join('\n'));
    const row = await t.db.selectFrom('ci_pipelines').select(['auto_cancel_on_new_commit', 'auto_cancel_on_job_failure'])
      .where('id', '=', pipeline.id).executeTakeFirstOrThrow();
    // The rule's keys win; the pipeline row is what the cancelling code reads (tests above).
    assert.deepEqual(row, { auto_cancel_on_new_commit: 'none', auto_cancel_on_job_failure: 'all' });
  });

  it('refuses secrets with a clear message', async () => {
    await pushFiles(t, p, { '.gitlab-ci.yml': 'job: { script: x, secrets: { DB: { vault: db/pw } } }\n' });
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { base: ['jobs:job secrets are not supported: kiln has no external secrets provider; use CI/CD variables instead'] } });
  });
});
