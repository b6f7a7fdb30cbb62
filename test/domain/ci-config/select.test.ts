/**
 * Which jobs a pipeline gets (issue 27, item 5), called directly: workflow:rules, rules (if,
 * changes, exists, when, allow_failure, variables, needs), only/except (refs, regexes, source
 * keywords, `@project`, variables, changes, kubernetes), then the needs of the jobs left and the
 * stages left. The pipeline (ref, source, variables, changed paths) is a plain object.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JobConfig } from '../../../src/domain/ci-config/ci-config.ts';
import { pipeline, type Pipeline, type World } from './memory.ts';

type Case = [title: string, yaml: string, p: Pipeline, jobs: string[], world?: World];

const BRANCH: Pipeline = { ref: 'main' };
const FEATURE: Pipeline = { ref: 'feat-x' };
const TAG: Pipeline = { ref: 'v1.0', tag: true };

const RULES: Case[] = [
  ['no rules: the job runs', 'a: { script: x }\n', BRANCH, ['a']],
  ['if holds', 'a: { script: x, rules: [{ if: $CI_COMMIT_BRANCH == "main" }] }\nb: { script: x }\n', BRANCH, ['a', 'b']],
  ['if fails: no rule holds, the job is left out', 'a: { script: x, rules: [{ if: $CI_COMMIT_TAG }] }\nb: { script: x }\n', BRANCH, ['b']],
  ['the first rule holding decides',
    'a: { script: x, rules: [{ if: $CI, when: never }, { when: always }] }\nb: { script: x }\n', BRANCH, ['b']],
  ['a rule without if holds', 'a: { script: x, rules: [{ when: on_success }] }\n', BRANCH, ['a']],
  ['regex with flags, && and ||',
    "a: { script: x, rules: [{ if: '$CI_COMMIT_REF_NAME =~ /^FEAT/i && ($X == \"1\" || $CI)' }] }\n", FEATURE, ['a']],
  ['the job\'s own variables', 'a: { script: x, variables: { MODE: fast }, rules: [{ if: $MODE == "fast" }] }\n', BRANCH, ['a']],
  ['global variables', 'variables: { MODE: fast }\na: { script: x, rules: [{ if: $MODE == "fast" }] }\n', BRANCH, ['a']],
  ['the caller\'s variables win over the configuration\'s',
    'variables: { MODE: fast }\na: { script: x, rules: [{ if: $MODE == "slow" }] }\nb: { script: x }\n',
    { ref: 'main', variables: { MODE: 'slow' } }, ['a', 'b']],
  ['a configured value naming another variable is expanded',
    'variables: { WHERE: "$CI_DEFAULT_BRANCH-x" }\na: { script: x, rules: [{ if: $WHERE == "main-x" }] }\n',
    BRANCH, ['a']],
  ['CI_JOB_NAME and CI_JOB_STAGE',
    'a: { stage: build, script: x, rules: [{ if: $CI_JOB_NAME == "a" && $CI_JOB_STAGE == "build" }] }\n', BRANCH, ['a']],
  ['CI_NODE_INDEX of a parallel copy', 'a: { script: x, parallel: 3, rules: [{ if: $CI_NODE_INDEX == "2" }] }\n', BRANCH, ['a 2/3']],
  ['matrix values', 'a: { script: x, parallel: { matrix: [{ P: [aws, gcp] }] }, rules: [{ if: $P == "gcp" }] }\n', BRANCH, ['a: [gcp]']],
  ['changes: true with nothing to compare with',
    'a: { script: x, rules: [{ changes: [src/*] }] }\n', { ref: 'main', changed: null }, ['a']],
  ['changes: a changed path matches', 'a: { script: x, rules: [{ changes: ["src/**/*.ts"] }] }\nb: { script: x }\n',
    { ref: 'main', changed: ['src/x/y.ts'] }, ['a', 'b']],
  ['changes: no changed path matches',
    'a: { script: x, rules: [{ changes: [src/*] }] }\nb: { script: x }\n', { ref: 'main', changed: ['README.md'] }, ['b']],
  ['changes: dotfiles match too', 'a: { script: x, rules: [{ changes: ["*"] }] }\n', { ref: 'main', changed: ['.env'] }, ['a']],
  ['changes: paths with variables and a leading slash',
    'variables: { DIR: src }\na: { script: x, rules: [{ changes: ["/$DIR/*"] }] }\nb: { script: x }\n',
    { ref: 'main', changed: ['src/a'] }, ['a', 'b']],
  ['changes: compare_to', 'a: { script: x, rules: [{ changes: { paths: [lib/*], compare_to: refs/heads/base } }] }\nb: { script: x }\n',
    { ref: 'main', changed: ['README.md'], comparedTo: { 'refs/heads/base': ['lib/a'] } }, ['a', 'b']],
  ['changes: compare_to that is no commit holds', 'a: { script: x, rules: [{ changes: { paths: [lib/*], compare_to: nope } }] }\n',
    { ref: 'main', changed: [] }, ['a']],
  ['exists: a file of the commit',
    'a: { script: x, rules: [{ exists: [Dockerfile] }] }\nb: { script: x, rules: [{ exists: ["**/*.go"] }] }\nc: { script: x }\n',
    BRANCH, ['a', 'c'], { files: { Dockerfile: '' } }],
  ['if, changes and exists must all hold', 'a: { script: x, rules: [{ if: $CI, changes: [a], exists: [b] }] }\nc: { script: x }\n',
    { ref: 'main', changed: ['a'] }, ['c'], { files: { a: '' } }],
];

const ONLY_EXCEPT: Case[] = [
  ['without only: branches and tags', 'a: { script: x }\n', TAG, ['a']],
  ['only: a branch name', 'a: { script: x, only: [main] }\nb: { script: x }\n', FEATURE, ['b']],
  ['only: a regex', "a: { script: x, only: ['/^feat-/'] }\n", FEATURE, ['a']],
  ['only: a regex with flags', "a: { script: x, only: ['/^FEAT-/i'] }\n", FEATURE, ['a']],
  ['only: branches', 'a: { script: x, only: [branches] }\nb: { script: x }\n', TAG, ['b']],
  ['only: tags', 'a: { script: x, only: [tags] }\n', TAG, ['a']],
  ['only: a source keyword', 'a: { script: x, only: [api] }\nb: { script: x, only: [pushes] }\n', { ref: 'main', source: 'api' }, ['a']],
  ['only: schedules, triggers, web',
    'a: { script: x, only: [schedules] }\nb: { script: x, only: [triggers] }\nc: { script: x, only: [web] }\n',
    { ref: 'main', source: 'trigger' }, ['b']],
  ['only: pipelines means downstream pipelines',
    'a: { script: x, only: [pipelines] }\n', { ref: 'main', source: 'parent_pipeline' }, ['a']],
  ['only: merge_requests',
    'a: { script: x, only: [merge_requests] }\nb: { script: x, only: [branches] }\n', { ref: 'main', source: 'merge_request_event' },
    ['a']],
  ['only: ref@project, for that project only',
    'a: { script: x, only: [main@g/p] }\nb: { script: x, only: [main@g/other] }\nc: { script: x, only: [branches@g/p] }\n',
    { ref: 'main', projectFullPath: 'g/p' }, ['a', 'c']],
  ['except: a branch', 'a: { script: x, except: [main] }\nb: { script: x }\n', BRANCH, ['b']],
  ['except alone still means branches and tags', 'a: { script: x, except: [main] }\n', TAG, ['a']],
  ['only: variables',
    'a: { script: x, only: { variables: [$X == "1", $CI_COMMIT_TAG] } }\nb: { script: x }\n', { ref: 'main', variables: { X: '1' } },
    ['a', 'b']],
  ['only: refs and variables must both hold',
    'a: { script: x, only: { refs: [tags], variables: [$CI] } }\nb: { script: x }\n', BRANCH, ['b']],
  ['except: variables',
    'a: { script: x, except: { variables: [$CI_PIPELINE_SOURCE == "api"] } }\nb: { script: x }\n', { ref: 'main', source: 'api' }, ['b']],
  ['only: changes', 'a: { script: x, only: { changes: [docs/*] } }\nb: { script: x }\n', { ref: 'main', changed: ['src/a'] }, ['b']],
  ['except: changes', 'a: { script: x, except: { changes: [docs/*] } }\nb: { script: x }\n', { ref: 'main', changed: ['docs/a'] }, ['b']],
  ['only: kubernetes never holds in kiln', 'a: { script: x, only: { kubernetes: active } }\nb: { script: x }\n', BRANCH, ['b']],
];

const WORKFLOW_AND_NEEDS: Case[] = [
  ['workflow:rules holding', 'workflow: { rules: [{ if: $CI_COMMIT_BRANCH }] }\na: { script: x }\n', BRANCH, ['a']],
  ['workflow:rules with when: always',
    'workflow: { rules: [{ if: $CI_COMMIT_TAG, when: never }, { when: always }] }\na: { script: x }\n', BRANCH, ['a']],
  ['workflow without rules', 'workflow: { name: x }\na: { script: x }\n', BRANCH, ['a']],
  ['needs of a job left out: optional ones are dropped',
    'a: { stage: build, script: x, rules: [{ if: $CI_COMMIT_TAG }] }\nb: { script: x, needs: [{ job: a, optional: true }] }\n',
    BRANCH, ['b']],
  ['stages without jobs are dropped', 'stages: [one, two, three]\na: { stage: two, script: x }\n', BRANCH, ['a']],
  ['.pre and .post jobs run beside others',
    'a: { stage: .pre, script: x }\nb: { script: x }\nc: { stage: .post, script: x }\n', BRANCH, ['a', 'b', 'c']],
];

function table(cases: Case[]) {
  for (const [title, yaml, p, jobs, world] of cases) {
    it(title, async () => {
      const config = await pipeline(yaml, world, p);
      assert.deepEqual(config.jobs.map((j) => j.name), jobs);
    });
  }
}

const jobNamed = (jobs: JobConfig[], name: string) => jobs.find((j) => j.name === name)!;

describe('CI job selection, called directly', () => {
  describe('rules', () => table(RULES));
  describe('only and except', () => table(ONLY_EXCEPT));
  describe('workflow, needs and stages', () => table(WORKFLOW_AND_NEEDS));

  it('takes when, allow_failure, variables and needs from the rule that holds', async () => {
    const { jobs } = await pipeline([
      'a: { stage: build, script: x }', 'b: { stage: build, script: x }',
      'manual: { script: x, rules: [{ when: manual }] }',
      'manual-ok: { script: x, allow_failure: true, rules: [{ when: manual }] }',
      'job-when: { script: x, when: manual, rules: [{ if: $CI }] }',
      'delayed: { script: x, rules: [{ when: delayed, start_in: 1h }] }',
      'vars: { script: x, variables: { A: job, B: job }, rules: [{ variables: { B: rule, C: rule }, allow_failure: true }] }',
      'needs: { script: x, needs: [a], rules: [{ needs: [b] }] }', '',
    ].join('\n'), {}, BRANCH);
    assert.deepEqual([jobNamed(jobs, 'manual').when, jobNamed(jobs, 'manual').allowFailure], ['manual', false]);
    assert.deepEqual([jobNamed(jobs, 'manual-ok').when, jobNamed(jobs, 'manual-ok').allowFailure], ['manual', true]);
    assert.equal(jobNamed(jobs, 'job-when').when, 'manual');
    assert.equal(jobNamed(jobs, 'delayed').when, 'on_success');
    assert.deepEqual(jobNamed(jobs, 'vars').variables, [
      { key: 'A', value: 'job' }, { key: 'B', value: 'rule' }, { key: 'C', value: 'rule' },
    ]);
    assert.equal(jobNamed(jobs, 'vars').allowFailure, true);
    assert.deepEqual(jobNamed(jobs, 'needs').needs, ['b']);
  });

  it('gives workflow:rules variables to every job, over the global ones but under the job\'s own', async () => {
    const config = await pipeline([
      'workflow: { rules: [{ if: $CI_COMMIT_BRANCH, variables: { DEPLOY: "yes", EXTRA: w } }] }',
      'variables: { DEPLOY: "no", KEEP: k }',
      'a: { script: x }', 'b: { script: x, variables: { EXTRA: own } }', 'c: { script: x, inherit: { variables: [KEEP] } }', '',
    ].join('\n'), {}, BRANCH);
    assert.deepEqual(config.variables, [{ key: 'KEEP', value: 'k' }, { key: 'DEPLOY', value: 'yes' }, { key: 'EXTRA', value: 'w' }]);
    assert.deepEqual(jobNamed(config.jobs, 'a').variables, config.variables);
    assert.deepEqual(jobNamed(config.jobs, 'b').variables, [
      { key: 'KEEP', value: 'k' }, { key: 'DEPLOY', value: 'yes' }, { key: 'EXTRA', value: 'own' },
    ]);
    assert.deepEqual(jobNamed(config.jobs, 'c').variables, [{ key: 'KEEP', value: 'k' }]);
  });

  it('keeps needs on the jobs left, and the stages in their configured order', async () => {
    const config = await pipeline([
      'stages: [build, test, deploy]',
      'a: { stage: build, script: x }', 'gone: { stage: build, script: x, only: [tags] }',
      'c: { stage: deploy, script: x, needs: [a, { job: gone, optional: true }] }', '',
    ].join('\n'), {}, BRANCH);
    assert.deepEqual(config.stages, ['build', 'deploy']);
    assert.deepEqual(jobNamed(config.jobs, 'c').needs, ['a']);
    assert.deepEqual(jobNamed(config.jobs, 'c').needsDetail, [{ name: 'a', artifacts: true, optional: false }]);
    // What only selection needs is gone from the jobs handed on.
    const internal = ['rules', 'only', 'except', 'parallel', 'ownVariables'];
    assert.deepEqual(Object.keys(jobNamed(config.jobs, 'c')).filter((k) => internal.includes(k)), []);
  });

  it('selects hundreds of jobs in well under a second', async () => {
    const rule = (i: number) => `[{ if: '$CI_COMMIT_REF_NAME =~ /^ma/ && $I != "${i}"' }]`;
    const yaml = Array.from({ length: 500 }, (_, i) => `j${i}: { script: x, rules: ${rule(i)} }`).join('\n');
    const started = performance.now();
    const config = await pipeline(yaml, {}, BRANCH);
    assert.equal(config.jobs.length, 500);
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  });
});
