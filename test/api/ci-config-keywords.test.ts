/**
 * `.gitlab-ci.yml` keyword by keyword (issue 14), at the HTTP boundary: which jobs a pipeline
 * gets (rules, workflow, only/except with the expression language), how they are expanded
 * (parallel, matrix, extends, !reference, default/inherit), includes of every kind, what the
 * runner is handed for each keyword, the engine's retry, and hostile configurations answered
 * with the Service's error in bounded time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';
import { freePort } from '../helpers/git.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { sweepCi } from '../../src/workers/ci-sweeper.ts';
import { ciEnvFrom } from '../../src/domain/pipelines/ci-env.ts';

describe('CI configuration keywords', () => {
  let t: TestApp;
  let p: CiProject;
  let remote: http.Server;
  let remotePort: number;
  let templates: string;
  let stamp = 0;

  before(async () => {
    remotePort = await freePort();
    remote = http.createServer((req, res) => {
      if (req.url === '/ci/remote.yml') res.end('remote-job:\n  script: echo remote\n');
      else if (req.url === '/ci/huge.yml') res.end(`# ${'x'.repeat(2 * 1024 * 1024)}\n`);
      else { res.statusCode = 404; res.end('no'); }
    });
    await new Promise<void>((resolve) => remote.listen(remotePort, '127.0.0.1', resolve));
    templates = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ci-templates-'));
    fs.mkdirSync(path.join(templates, 'Jobs'));
    fs.writeFileSync(path.join(templates, 'Jobs/Build.gitlab-ci.yml'), 'template-build:\n  stage: build\n  script: echo template\n');
    t = await startTestApp({
      KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN,
      KILN_CI_REMOTE_INCLUDE_HOSTS: `127.0.0.1:${remotePort}`,
      KILN_CI_TEMPLATES_DIR: templates,
    });
    p = await createCiProject(t);
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => remote.close(resolve));
    fs.rmSync(templates, { recursive: true, force: true });
  });

  const create = (ref = 'main', project = p) => t.request({
    method: 'POST', url: `/api/v4/projects/${project.project.id}/pipeline?ref=${encodeURIComponent(ref)}`, token: project.ownerToken,
  });

  async function pipelineFor(config: string, o: { branch?: string; files?: Record<string, string>; tag?: string; ref?: string } = {}) {
    stamp += 1;
    await pushFiles(t, p, { '.gitlab-ci.yml': config, 'stamp.txt': String(stamp), ...(o.files ?? {}) }, { branch: o.branch ?? 'main', ...(o.tag ? { tag: o.tag } : {}) });
    const res = await create(o.ref ?? o.tag ?? o.branch ?? 'main');
    return res;
  }

  async function jobsOf(config: string, o: Parameters<typeof pipelineFor>[1] = {}) {
    const res = await pipelineFor(config, o);
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as { id: number }).id;
    return { id, jobs: await pipelineJobs(t, p, id) };
  }

  const errorOf = async (config: string, o: Parameters<typeof pipelineFor>[1] = {}) => {
    const res = await pipelineFor(config, o);
    assert.equal(res.statusCode, 400, res.body);
    return (res.json() as { message: { base: string[] } }).message.base[0];
  };

  /** Pushes the file, then times only the pipeline creation request. */
  const timedCreate = async (config: string) => {
    stamp += 1;
    await pushFiles(t, p, { '.gitlab-ci.yml': config, 'stamp.txt': String(stamp) });
    const started = Date.now();
    const res = await create();
    return { res, ms: Date.now() - started };
  };

  const dbJob = (pipelineId: number, name: string) => t.db.selectFrom('ci_builds').selectAll()
    .where('pipeline_id', '=', pipelineId).where('name', '=', name).executeTakeFirstOrThrow();

  it('reads YAML 1.1 as the Service does: yes/no booleans, the last duplicate key, empty scripts, a spec header', async () => {
    const { id, jobs } = await jobsOf([
      'spec:', '  inputs:', '    stage:', '      default: test', '---',
      'build:', '  script: echo one', '  allow_failure: yes', '  before_script:', '  script: echo two',
    ].join('\n'));
    assert.deepEqual(jobs.map((j) => j.name), ['build']);
    const row = await dbJob(id, 'build');
    assert.equal(row.allow_failure, 1);
    assert.deepEqual(JSON.parse(row.options).script, ['echo two']);
    assert.deepEqual(JSON.parse(row.options).before_script, []);
  });

  it('selects jobs with rules: if with regex, &&, ||, parentheses, null, when, allow_failure, variables', async () => {
    const { id, jobs } = await jobsOf(`
variables:
  MODE: "fast"
a-branch:
  script: x
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE == "api"
a-regex:
  script: x
  rules:
    - if: '$CI_COMMIT_REF_NAME =~ /^MA/i && ($MODE == "slow" || $MODE =~ /as/)'
      when: manual
a-never:
  script: x
  rules:
    - if: $UNDEFINED == null
      when: never
    - when: always
a-none:
  script: x
  rules:
    - if: $CI_COMMIT_TAG
a-vars:
  script: x
  variables: { MODE: "job" }
  rules:
    - if: $MODE == "job"
      variables: { EXTRA: "1" }
      allow_failure: true
a-not-match:
  script: x
  rules:
    - if: $CI_COMMIT_BRANCH !~ /^release/
`);
    assert.deepEqual(jobs.map((j) => j.name).sort(), ['a-branch', 'a-not-match', 'a-regex', 'a-vars']);
    const regex = await dbJob(id, 'a-regex');
    assert.equal(regex.run_when, 'manual');
    // Manual jobs that rules add block the pipeline unless they allow failure.
    assert.equal(regex.allow_failure, 0);
    const vars = await dbJob(id, 'a-vars');
    assert.deepEqual(JSON.parse(vars.yaml_variables), [{ key: 'MODE', value: 'job' }, { key: 'EXTRA', value: '1' }]);
    assert.equal(vars.allow_failure, 1);
  });

  it('answers the Service errors for workflow:rules and invalid expressions', async () => {
    assert.equal(await errorOf('workflow:\n  rules:\n    - if: $CI_COMMIT_TAG\nbuild:\n  script: x\n'), 'Pipeline filtered out by workflow rules.');
    assert.equal(await errorOf('build:\n  script: x\n  rules:\n    - if: $A = "b"\n'), 'jobs:build:rules:rule if invalid expression syntax');
    assert.equal(await errorOf('build:\n  script: x\n  rules:\n    - if: $CI_COMMIT_TAG\n'), 'No stages / jobs for this pipeline.');
    assert.equal(await errorOf('build:\n  script: x\n  only: [main]\n  rules:\n    - when: always\n'), 'jobs:build config key may not be used with `rules`: only');
    const ok = await jobsOf('workflow:\n  rules:\n    - if: $CI_COMMIT_BRANCH\n      variables: { DEPLOY: "yes" }\nvariables:\n  DEPLOY: "no"\nbuild:\n  script: x\n');
    assert.deepEqual(JSON.parse((await dbJob(ok.id, 'build')).yaml_variables), [{ key: 'DEPLOY', value: 'yes' }]);
  });

  it('selects jobs with only/except: refs, regexes, special words, variables', async () => {
    const config = `
on-main: { script: x, only: [main] }
on-regex: { script: x, only: ['/^feat-.*$/'] }
on-branches: { script: x, only: [branches] }
on-tags: { script: x, only: [tags] }
on-api: { script: x, only: [api] }
on-pushes: { script: x, only: [pushes] }
except-main: { script: x, except: [main] }
only-vars: { script: x, only: { variables: ['$CI_COMMIT_REF_NAME == "feat-x"'] } }
except-vars: { script: x, except: { variables: ['$CI_PIPELINE_SOURCE == "api"'] } }
k8s: { script: x, only: { kubernetes: active } }
default-policy: { script: x }
`;
    const main = await jobsOf(config);
    assert.deepEqual(main.jobs.map((j) => j.name).sort(), ['default-policy', 'on-api', 'on-branches', 'on-main']);
    const feat = await jobsOf(config, { branch: 'feat-x' });
    assert.deepEqual(feat.jobs.map((j) => j.name).sort(), ['default-policy', 'except-main', 'on-api', 'on-branches', 'on-regex', 'only-vars']);
    const tag = await jobsOf(config, { tag: 'v1.0' });
    assert.deepEqual(tag.jobs.map((j) => j.name).sort(), ['default-policy', 'except-main', 'on-api', 'on-tags']);
  });

  it('expands parallel and parallel:matrix with the Service names, variables and needs', async () => {
    const { id, jobs } = await jobsOf(`
build:
  stage: build
  parallel: 3
  script: make
test:
  parallel:
    matrix:
      - PROVIDER: aws
        STACK: [monitoring, app1]
      - PROVIDER: [gcp, "vultr"]
  script: echo $PROVIDER
  rules:
    - if: $PROVIDER == "gcp"
      when: never
    - when: on_success
after:
  stage: deploy
  needs: [build]
  script: x
pick:
  stage: deploy
  needs:
    - job: test
      parallel:
        matrix:
          - PROVIDER: aws
            STACK: app1
  script: x
`);
    assert.deepEqual(jobs.map((j) => j.name).sort(), ['after', 'build 1/3', 'build 2/3', 'build 3/3', 'pick', 'test: [aws, app1]', 'test: [aws, monitoring]', 'test: [vultr]']);
    assert.deepEqual(JSON.parse((await dbJob(id, 'pick')).needs!), ['test: [aws, app1]']);
    const matrix = await dbJob(id, 'test: [aws, app1]');
    assert.deepEqual(JSON.parse(matrix.yaml_variables), [{ key: 'PROVIDER', value: 'aws' }, { key: 'STACK', value: 'app1' }]);
    assert.deepEqual(JSON.parse((await dbJob(id, 'after')).needs!), ['build 1/3', 'build 2/3', 'build 3/3']);
  });

  it('resolves extends (deep merge), !reference, anchors, default: and inherit:', async () => {
    const { id } = await jobsOf(`
default:
  image: ruby:3.1
  tags: [docker]
  timeout: 10m
  retry: 1
  before_script: [echo default]
variables:
  A: "1"
  B: "2"
.setup:
  script: [echo setup]
  variables: { C: "3" }
.base: &base
  stage: build
  variables: { D: "4" }
  artifacts: { paths: [out/] }
build:
  <<: *base
  extends: .setup
  script:
    - !reference [.setup, script]
    - echo build
  inherit:
    default: [image]
    variables: [A]
`);
    const row = await dbJob(id, 'build');
    const o = JSON.parse(row.options);
    assert.deepEqual(o.script, ['echo setup', 'echo build']);
    assert.deepEqual(o.image, { name: 'ruby:3.1' });
    assert.deepEqual(o.before_script, []);
    assert.equal(o.retry, null);
    assert.equal(row.tag_list, '');
    assert.deepEqual(o.artifacts.paths, ['out/']);
    assert.deepEqual(JSON.parse(row.yaml_variables).map((v: { key: string }) => v.key), ['A', 'D', 'C'].sort((a, b) => ['A', 'C', 'D'].indexOf(a) - ['A', 'C', 'D'].indexOf(b)));
    const plain = await jobsOf('default:\n  tags: [docker]\n  timeout: 10m\nbuild:\n  script: x\n');
    const prow = await dbJob(plain.id, 'build');
    assert.equal(prow.tag_list, 'docker');
    assert.equal(prow.timeout, 600);
    assert.match(await errorOf('build:\n  script:\n    - !reference [.nope, script]\n'), /^!reference \["\.nope", "script"\] could not be found/);
  });

  it('includes local wildcards, another project, a remote file from an allowed host and a template', async () => {
    const other = await createCiProject(t, { owner: p.owner });
    // A local include inside another project's file is a file of that project.
    await pushFiles(t, other, {
      'templates/a.yml': 'include: templates/common.yml\nproj-a:\n  script: echo a\n', 'templates/b.yml': 'proj-b:\n  script: echo b\n',
      'templates/common.yml': 'proj-common:\n  script: echo common\n',
    });
    const { jobs } = await jobsOf(`
include:
  - local: 'ci/*.yml'
  - project: '${other.fullPath}'
    ref: main
    file: [templates/a.yml, /templates/b.yml]
  - remote: 'http://127.0.0.1:${remotePort}/ci/remote.yml'
  - template: Jobs/Build.gitlab-ci.yml
own:
  script: x
`, { files: { 'ci/one.yml': 'one:\n  script: x\n', 'ci/two.yml': 'two:\n  script: x\n' } });
    assert.deepEqual(jobs.map((j) => j.name).sort(), ['one', 'own', 'proj-a', 'proj-b', 'proj-common', 'remote-job', 'template-build', 'two']);
  });

  it('creates child pipelines from several trigger:include entries, forwarding the bridge variables', async () => {
    const shared = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, shared, { 'ci/b.yml': 'b-job:\n  script: echo b\n' });
    const { id } = await jobsOf(`
child:
  variables: { CHILD_MODE: "on" }
  trigger:
    include:
      - local: ci/child-a.yml
      - project: '${shared.fullPath}'
        file: ci/b.yml
`, { files: { 'ci/child-a.yml': 'a-job:\n  script: x\n  rules:\n    - if: $CHILD_MODE == "on"\nnot-me:\n  script: x\n  rules:\n    - if: $CHILD_MODE == "off"\n' } });
    const bridge = await dbJob(id, 'child');
    const child = await t.db.selectFrom('ci_pipelines').selectAll().where('upstream_bridge_id', '=', bridge.id).executeTakeFirstOrThrow();
    assert.equal(child.source, 'parent_pipeline');
    const names = (await t.db.selectFrom('ci_builds').select('name').where('pipeline_id', '=', child.id).orderBy('id').execute()).map((r) => r.name);
    assert.deepEqual(names, ['a-job', 'b-job']);
  });

  it('names the include and why when it cannot be read', async () => {
    const stranger = await createCiProject(t, { owner: await createUser(t.db) });
    assert.equal(await errorOf(`include:\n  - project: '${stranger.fullPath}'\n    file: a.yml\nb:\n  script: x\n`),
      `Project \`${stranger.fullPath}\` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.`);
    assert.equal(await errorOf('include: https://example.com/ci.yml\nb:\n  script: x\n'),
      'Remote file `https://example.com/ci.yml` could not be fetched because its host is not in the allowed remote hosts!');
    assert.equal(await errorOf(`include:\n  remote: http://127.0.0.1:${remotePort}/missing.yml\nb:\n  script: x\n`),
      `Remote file \`http://127.0.0.1:${remotePort}/missing.yml\` could not be fetched because of HTTP code \`404\` error!`);
    assert.equal(await errorOf(`include:\n  remote: http://127.0.0.1:${remotePort}/ci/huge.yml\nb:\n  script: x\n`),
      `Remote file \`http://127.0.0.1:${remotePort}/ci/huge.yml\` could not be fetched because of HTTP error!`);
    assert.equal(await errorOf('include:\n  template: Nope.gitlab-ci.yml\nb:\n  script: x\n'), 'Included file `Nope.gitlab-ci.yml` is empty or does not exist!');
    assert.equal(await errorOf('include:\n  - local: a.yml\n    remote: b.yml\nb:\n  script: x\n'), 'Include `{"local":"a.yml","remote":"b.yml"}` needs to match exactly one accessor!');
    assert.equal(await errorOf('include: ci/loop-a.yml\nb:\n  script: x\n', { files: { 'ci/loop-a.yml': 'include: ci/loop-b.yml\n', 'ci/loop-b.yml': 'include: ci/loop-a.yml\n' } }),
      'Include `ci/loop-a.yml` was already included!');
  });

  it('answers hostile configurations with an error in bounded time and keeps serving', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`), 'build:\n  script: x'].join('\n');
    const bombed = await timedCreate(bomb);
    assert.deepEqual(bombed.res.json(), { message: { base: ['The parsed YAML is too big'] } });
    assert.ok(bombed.ms < 3000, `${bombed.ms} ms`);
    const chain = Array.from({ length: 50 }, (_, i) => `.l${i}:\n  extends: .l${i + 1}\n`).join('') + '.l50:\n  script: x\nbuild:\n  extends: .l0\n';
    assert.match(await errorOf(chain), /nesting too deep in `extends`/);
    const evil = await timedCreate(`build:\n  script: x\n  rules:\n    - if: '$CI_COMMIT_MESSAGE =~ /^(a+)+$/'\n    - when: always\n`);
    assert.equal(evil.res.statusCode, 201);
    assert.ok(evil.ms < 3000, `${evil.ms} ms`);
    const many = await timedCreate(Array.from({ length: 10_000 }, (_, i) => `j${i}: { script: x }`).join('\n'));
    assert.match((many.res.json() as { message: { base: string[] } }).message.base[0], /^The number of jobs has exceeded the limit of 2000/);
    assert.ok(many.ms < 10_000, `${many.ms} ms`);
    // 500 jobs of 200 matrix copies each would be 100,000 jobs: refused before they exist.
    const matrix = Array.from({ length: 500 }, (_, i) => `m${i}:\n  script: x\n  parallel:\n    matrix:\n      - A: [${Array.from({ length: 20 }, (_, k) => k).join(',')}]\n        B: [${Array.from({ length: 10 }, (_, k) => k).join(',')}]`).join('\n');
    const wide = await timedCreate(matrix);
    assert.match((wide.res.json() as { message: { base: string[] } }).message.base[0], /^The number of jobs has exceeded the limit of 2000/);
    assert.ok(wide.ms < 10_000, `${wide.ms} ms`);
    // NUL bytes in names that reach git and the database are refused as missing files.
    assert.equal(await errorOf('include: "ci/a\\0.yml"\nb:\n  script: x\n'), 'Local file `ci/a\0.yml` does not exist!');
    assert.match(await errorOf('include:\n  project: "a\\0b"\n  file: x.yml\nb:\n  script: x\n'), /^Project `a\0b` not found or access denied!/);
    assert.equal((await pipelineFor('b:\n  script: x\n  cache:\n    key:\n      files: ["a\\0"]\n')).statusCode, 201);
    const nulRef = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/ci/lint?sha=${encodeURIComponent('a\0b')}`, token: p.ownerToken });
    assert.equal(nulRef.statusCode < 500, true, nulRef.body);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/version', token: p.ownerToken })).statusCode, 200);
  });

  it('hands the runner every keyword and retries by retry:when', async () => {
    const runner = await TestRunner.register(t, { tags: ['kw-docker'], runUntagged: false });
    const { id } = await jobsOf(`
build:
  tags: [kw-docker]
  image: { name: "ruby:3.1", entrypoint: [""], pull_policy: if-not-present }
  services:
    - postgres:14
    - name: redis:7
      alias: cache
      command: ["redis-server"]
  cache:
    key: gems
    paths: [vendor/]
    policy: pull
  artifacts:
    paths: [out/]
    exclude: [out/tmp/*]
    reports:
      junit: report.xml
      dotenv: build.env
  retry:
    max: 2
    when: [runner_system_failure]
  environment: { name: review/main, url: "https://review.example.com" }
  coverage: '/Coverage: (\\d+\\.\\d+)%/'
  interruptible: true
  parallel: 2
  script: make
`);
    const job = await runner.requestJob();
    const payload = job as unknown as Record<string, any>;
    assert.deepEqual(payload.image, { name: 'ruby:3.1', entrypoint: [''], ports: [], pull_policy: ['if-not-present'] });
    assert.deepEqual(payload.services.map((s: { name: string; alias: string | null }) => [s.name, s.alias]), [['postgres:14', null], ['redis:7', 'cache']]);
    // fallback_keys: always a list, as the Service's JobRequest::Cache entity exposes it.
    assert.deepEqual(payload.cache, [{ key: 'gems', untracked: false, policy: 'pull', paths: ['vendor/'], when: 'on_success', fallback_keys: [] }]);
    assert.deepEqual(payload.artifacts.map((a: { artifact_type: string }) => a.artifact_type), ['archive', 'junit', 'dotenv']);
    assert.deepEqual(payload.artifacts[0].exclude, ['out/tmp/*']);
    const vars = new Map((payload.variables as { key: string; value: string }[]).map((v) => [v.key, v.value]));
    assert.equal(vars.get('CI_NODE_TOTAL'), '2');
    assert.equal(vars.get('CI_ENVIRONMENT_NAME'), 'review/main');
    // No variable here is a file or raw: the Service's variables collection leaves false flags out.
    assert.ok((payload.variables as Record<string, unknown>[]).every((v) => !('file' in v) && !('raw' in v)));
    // A script failure is not in retry:when; a runner system failure is, up to max.
    await runner.appendTrace(job, 'Coverage: 87.5%\n');
    assert.equal((await runner.update(job, 'failed', 'runner_system_failure')).statusCode, 200);
    const all = await pipelineJobs(t, p, id, '&include_retried=true');
    const named = all.filter((j) => j.name === job.job_info.name);
    assert.deepEqual(named.map((j) => j.status).sort(), ['failed', 'pending']);
    const again = await runner.requestJob();
    assert.equal(again.job_info.name, job.job_info.name === 'build 1/2' ? 'build 2/2' : 'build 1/2');
    await runner.update(again, 'failed', 'script_failure');
    const byName = (await pipelineJobs(t, p, id, '&include_retried=true')).filter((j) => j.name === again.job_info.name);
    assert.deepEqual(byName.map((j) => j.status), ['failed']);
    const failedRow = await t.db.selectFrom('ci_builds').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal(failedRow.coverage, 87.5);
  });

  it('passes on dependencies as dependencies: and needs:artifacts say, with the job timeout', async () => {
    const runner = await TestRunner.register(t, { tags: ['deps'], runUntagged: false });
    await jobsOf(`
default:
  tags: [deps]
build:
  stage: build
  script: make
none:
  stage: test
  dependencies: []
  timeout: 15 minutes
  script: x
named:
  stage: test
  dependencies: [build]
  script: x
no-artifacts:
  stage: test
  needs: [{ job: build, artifacts: false }]
  script: x
all:
  stage: deploy
  script: x
`);
    await runner.run('success');
    const seen = new Map<string, { deps: string[]; timeout: number }>();
    for (let i = 0; i < 3; i++) {
      const job = await runner.requestJob() as unknown as { id: number; token: string; job_info: { name: string }; dependencies: { name: string }[]; runner_info: { timeout: number } };
      seen.set(job.job_info.name, { deps: job.dependencies.map((d) => d.name), timeout: job.runner_info.timeout });
      await runner.update(job, 'success');
    }
    assert.deepEqual(seen.get('none'), { deps: [], timeout: 900 });
    assert.deepEqual(seen.get('named')?.deps, ['build']);
    assert.deepEqual(seen.get('no-artifacts')?.deps, []);
    const last = await runner.requestJob() as unknown as { job_info: { name: string }; dependencies: { name: string }[] };
    assert.equal(last.job_info.name, 'all');
    assert.deepEqual(last.dependencies.map((d) => d.name).sort(), ['build', 'named', 'no-artifacts', 'none']);
  });

  it('retries a job the timeout sweeper fails when retry:when lists stuck_or_timeout_failure', async () => {
    const { id } = await jobsOf('stuck:\n  tags: [nobody-runs-this]\n  script: x\n  retry:\n    max: 1\n    when: stuck_or_timeout_failure\n');
    const later = new Date(Date.now() + 2 * 86_400_000);
    await sweepCi(ciEnvFrom(t.db, t.config), later);
    const statuses = (await pipelineJobs(t, p, id, '&include_retried=true')).map((j) => j.status).sort();
    assert.deepEqual(statuses, ['failed', 'pending']);
    // The copy is the last retry max allows.
    await sweepCi(ciEnvFrom(t.db, t.config), new Date(later.getTime() + 2 * 86_400_000));
    assert.deepEqual((await pipelineJobs(t, p, id, '&include_retried=true')).map((j) => j.status).sort(), ['failed', 'failed']);
  });

  it('allows the failure of exit codes listed in allow_failure:exit_codes', async () => {
    const runner = await TestRunner.register(t, { tags: ['exit'], runUntagged: false });
    const { id } = await jobsOf('build:\n  tags: [exit]\n  script: x\n  allow_failure:\n    exit_codes: [137]\n');
    const job = await runner.requestJob();
    const res = await t.request({ method: 'PUT', url: `/api/v4/jobs/${job.id}`, payload: { token: job.token, state: 'failed', failure_reason: 'script_failure', exit_code: 137 } });
    assert.equal(res.statusCode, 200);
    const row = await dbJob(id, 'build');
    assert.equal(row.allow_failure, 1);
    const pipeline = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken });
    assert.equal((pipeline.json() as { status: string }).status, 'success');
  });

  it('lints a configuration with POST and the project file with GET', async () => {
    await pushFiles(t, p, { 'stamp.txt': 'lint', '.gitlab-ci.yml': 'build:\n  script: x\n  rules:\n    - if: $CI_COMMIT_TAG\ntest:\n  script: y\n  only: [main]\n' });
    const post = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken,
      payload: { content: '.base:\n  script: x\njob:\n  extends: .base\n', include_jobs: true },
    });
    assert.equal(post.statusCode, 200, post.body);
    const body = post.json() as { valid: boolean; errors: string[]; merged_yaml: string; jobs: { name: string; only: unknown }[] };
    assert.equal(body.valid, true);
    assert.deepEqual(body.errors, []);
    assert.match(body.merged_yaml, /^---\n/);
    assert.deepEqual(body.jobs.map((j) => [j.name, j.only]), [['job', { refs: ['branches', 'tags'] }]]);
    const bad = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken, payload: { content: 'job:\n  scriptt: x\n' } });
    assert.deepEqual(bad.json(), { valid: false, errors: ['jobs:job config contains unknown keys: scriptt'], warnings: [], merged_yaml: null });
    const get = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/ci/lint?include_jobs=true`, token: p.ownerToken });
    assert.equal((get.json() as { valid: boolean }).valid, true, get.body);
    assert.deepEqual((get.json() as { jobs: { name: string }[] }).jobs.map((j) => j.name), ['build', 'test']);
    const dry = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/ci/lint?include_jobs=true&dry_run=true`, token: p.ownerToken });
    assert.deepEqual((dry.json() as { jobs: { name: string }[] }).jobs.map((j) => j.name), ['test']);
    const warned = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken,
      payload: { content: 'job:\n  script: x\n  rules:\n    - if: $A\n    - when: always\n' },
    });
    assert.deepEqual((warned.json() as { warnings: string[] }).warnings, [
      'jobs:job may allow multiple pipelines to run for a single action due to `rules:when` clause with no `workflow:rules` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings',
    ]);
    const missing = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken, payload: {} });
    assert.equal(missing.statusCode, 400);
    const reporter = await createUser(t.db);
    const token = await createToken(t.db, reporter, { scopes: ['api'] });
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token, payload: { content: 'a: 1' } })).statusCode, 404);
  });
});
