/**
 * Each `.gitlab-ci.yml` keyword as the loader reads it (issue 27, item 5), called directly with
 * in-memory files: what the job becomes (the fields handed to the runner and the engine), with
 * `default:`, `inherit:`, `extends:`, `!reference`, `parallel:` and the warnings CI lint shows.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JobSpec } from '../../../src/domain/ci-config/job-entry.ts';
import { load } from './memory.ts';

/** A keyword case: the configuration, and fields the job named `job` must have (each compared whole). */
type Case = [title: string, yaml: string, fields: Partial<Record<keyof JobSpec, unknown>>];

const STAGES = ['.pre', 'build', 'test', 'deploy', '.post'];

async function jobOf(yaml: string, name = 'job'): Promise<JobSpec> {
  const found = (await load(yaml)).jobs.find((j) => j.name === name);
  assert.ok(found, `no job ${name}`);
  return found;
}

/** Hashes read from YAML have no prototype; compare them as JSON would show them. */
const plain = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

function table(cases: Case[]) {
  for (const [title, yaml, fields] of cases) {
    it(title, async () => {
      const job = await jobOf(yaml);
      for (const [key, value] of Object.entries(fields)) assert.deepEqual(plain(job[key as keyof JobSpec]), value, `${key} of\n${yaml}`);
    });
  }
}

describe('CI keywords, called directly', () => {
  describe('scripts', () => table([
    ['a string script is a one-line list', 'job: { script: echo }\n', { script: ['echo'], beforeScript: [], afterScript: [] }],
    ['nested lists flatten, numbers and booleans become text',
      'job: { script: [a, [b, [c]], 1, true] }\n', { script: ['a', 'b', 'c', '1', 'true'] }],
    ['a multi-line block stays one line of script', 'job:\n  script:\n    - |\n      one\n      two\n', { script: ['one\ntwo\n'] }],
    ['an empty script list is allowed', 'job: { script: [] }\n', { script: [] }],
    ['before and after scripts of the job', 'job: { script: x, before_script: b, after_script: [a1, a2] }\n',
      { beforeScript: ['b'], afterScript: ['a1', 'a2'] }],
    ['default: before and after scripts', 'default: { before_script: [d1], after_script: d2 }\njob: { script: x }\n',
      { beforeScript: ['d1'], afterScript: ['d2'] }],
    ['top-level before_script and after_script', 'before_script: [t1]\nafter_script: [t2]\njob: { script: x }\n',
      { beforeScript: ['t1'], afterScript: ['t2'] }],
    ['default: wins over the top-level keyword', 'before_script: [top]\ndefault: { before_script: [def] }\njob: { script: x }\n',
      { beforeScript: ['def'] }],
    ["the job's own before_script wins, even empty", 'default: { before_script: [d] }\njob: { script: x, before_script: [] }\n',
      { beforeScript: [] }],
    // Null is no value: the entry factory makes it unspecified, and Inheritable#inherit! fills it from default:.
    ['a before_script of null takes default:', 'default: { before_script: [d] }\njob: { script: x, before_script: null }\n',
      { beforeScript: ['d'] }],
  ]));

  describe('stage and when', () => table([
    ['test is the default stage', 'job: { script: x }\n', { stage: 'test', stageIdx: 2 }],
    ['stage: build', 'job: { script: x, stage: build }\n', { stage: 'build', stageIdx: 1 }],
    ['type: is the old name of stage:', 'job: { script: x, type: deploy }\n', { stage: 'deploy', stageIdx: 3 }],
    ['.pre and .post are always there', 'stages: [one]\njob: { script: x, stage: .post }\n', { stage: '.post', stageIdx: 2 }],
    ['configured stages, repeated ones once, .pre/.post kept at the ends',
      'stages: [b, .post, a, b]\njob: { script: x, stage: a }\n', { stage: 'a', stageIdx: 2 }],
    ['types: is the old name of stages:', 'types: [only]\njob: { script: x, stage: only }\n', { stage: 'only', stageIdx: 1 }],
    ['on_success by default, failure not allowed', 'job: { script: x }\n', { when: 'on_success', allowFailure: false, whenGiven: false }],
    ['when: always', 'job: { script: x, when: always }\n', { when: 'always', whenGiven: true }],
    ['when: on_failure', 'job: { script: x, when: on_failure }\n', { when: 'on_failure' }],
    ['a manual job may fail unless it says otherwise', 'job: { script: x, when: manual }\n', { when: 'manual', allowFailure: true }],
    ['a manual job that must not fail', 'job: { script: x, when: manual, allow_failure: false }\n',
      { allowFailure: false, allowFailureGiven: true }],
    ['delayed runs as on_success, start_in kept', 'job: { script: x, when: delayed, start_in: 30 minutes }\n',
      { when: 'on_success', startIn: '30 minutes' }],
    ['allow_failure: true', 'job: { script: x, allow_failure: true }\n', { allowFailure: true, allowFailureExitCodes: null }],
    ['allow_failure: exit_codes as one code', 'job: { script: x, allow_failure: { exit_codes: 137 } }\n',
      { allowFailure: false, allowFailureExitCodes: [137] }],
    ['allow_failure: exit_codes as a list',
      'job: { script: x, allow_failure: { exit_codes: [1, 2] } }\n', { allowFailureExitCodes: [1, 2] }],
  ]));

  describe('image and services', () => table([
    ['image: a name', 'job: { script: x, image: "ruby:3.1" }\n', { image: { name: 'ruby:3.1' } }],
    ['image: every key',
      'job:\n  script: x\n  image:\n    name: r\n    entrypoint: [""]\n    pull_policy: always\n'
      + '    ports: [80, { number: 81, protocol: http, name: web }]\n',
      {
        image: {
          name: 'r', entrypoint: [''], pullPolicy: ['always'], ports: [{ number: 80 }, { number: 81, protocol: 'http', name: 'web' }],
        },
      },
    ],
    ['image: several pull policies', 'job: { script: x, image: { name: r, pull_policy: [always, if-not-present] } }\n',
      { image: { name: 'r', pullPolicy: ['always', 'if-not-present'] } }],
    ['default: image', 'default: { image: d }\njob: { script: x }\n', { image: { name: 'd' } }],
    ['top-level image', 'image: top\njob: { script: x }\n', { image: { name: 'top' } }],
    ['no image', 'job: { script: x }\n', { image: null }],
    ['services: names and hashes',
      'job: { script: x, services: [pg, { name: redis, alias: cache, command: [serve, -v], entrypoint: sh, variables: { A: 1 } }] }\n',
      {
        services: [
          { name: 'pg' },
          { name: 'redis', entrypoint: ['sh'], alias: 'cache', command: ['serve', '-v'], variables: [{ key: 'A', value: '1' }] },
        ],
      },
    ],
    ['default: services', 'default: { services: [pg] }\njob: { script: x }\n', { services: [{ name: 'pg' }] }],
  ]));

  describe('variables', () => table([
    ['values become text; null is empty; a hash gives its value',
      'job: { script: x, variables: { A: 1, B: true, C: null, D: { value: v, description: d }, E: { description: d } } }\n',
      {
        variables: [
          { key: 'A', value: '1' }, { key: 'B', value: 'true' }, { key: 'C', value: '' }, { key: 'D', value: 'v' }, { key: 'E', value: '' },
        ],
      },
    ],
    ['global variables first, the job\'s own win', 'variables: { A: g, B: g }\njob: { script: x, variables: { B: j } }\n',
      { variables: [{ key: 'A', value: 'g' }, { key: 'B', value: 'j' }], ownVariables: [{ key: 'B', value: 'j' }] }],
    ['inherit:variables false', 'variables: { A: g }\njob: { script: x, variables: { B: j }, inherit: { variables: false } }\n',
      { variables: [{ key: 'B', value: 'j' }] }],
    ['inherit:variables a list',
      'variables: { A: g, B: g }\njob: { script: x, inherit: { variables: [B] } }\n', { variables: [{ key: 'B', value: 'g' }] }],
  ]));

  describe('tags, timeout, retry, interruptible, coverage, resource_group, release', () => table([
    ['tags once each, sorted', 'job: { script: x, tags: [b, a, b] }\n', { tags: ['a', 'b'] }],
    ['default: tags', 'default: { tags: [d] }\njob: { script: x }\n', { tags: ['d'] }],
    ['the job\'s empty tags win over default:', 'default: { tags: [d] }\njob: { script: x, tags: [] }\n', { tags: [] }],
    ['timeout in words', 'job: { script: x, timeout: 1h 30m }\n', { timeout: 5400 }],
    ['timeout in seconds', 'job: { script: x, timeout: 3600 }\n', { timeout: 3600 }],
    ['timeout of default:', 'default: { timeout: 2 days }\njob: { script: x }\n', { timeout: 172800 }],
    ['no timeout', 'job: { script: x }\n', { timeout: null }],
    ['retry: a count', 'job: { script: x, retry: 2 }\n', { retry: { max: 2, when: ['always'] } }],
    ['retry: max and when',
      'job: { script: x, retry: { max: 1, when: script_failure } }\n', { retry: { max: 1, when: ['script_failure'] } }],
    ['retry: when list, max 0 by default', 'job: { script: x, retry: { when: [api_failure, runner_system_failure] } }\n',
      { retry: { max: 0, when: ['api_failure', 'runner_system_failure'] } }],
    ['retry of default:', 'default: { retry: 1 }\njob: { script: x }\n', { retry: { max: 1, when: ['always'] } }],
    ['interruptible', 'job: { script: x, interruptible: true }\n', { interruptible: true }],
    ['interruptible of default:', 'default: { interruptible: false }\njob: { script: x }\n', { interruptible: false }],
    ['interruptible not said', 'job: { script: x }\n', { interruptible: null }],
    ['coverage: the regex between its slashes', "job: { script: x, coverage: '/Total: (\\d+)%/' }\n", { coverage: 'Total: (\\d+)%' }],
    ['resource_group', 'job: { script: x, resource_group: prod }\n', { resourceGroup: 'prod' }],
    ['release: the hash as written', 'job: { script: x, release: { tag_name: v1, description: d, assets: { links: [] } } }\n',
      { release: { tag_name: 'v1', description: 'd', assets: { links: [] } } }],
    ['keys kiln reads but does not act on',
      'job: { script: x, hooks: {}, dast_configuration: {} }\n', { script: ['x'] }],
  ]));

  describe('environment', () => table([
    ['a name', 'job: { script: x, environment: production }\n', { environment: { name: 'production', action: 'start' } }],
    ['every key',
      'job: { script: x, environment: { name: review, url: "https://r", action: stop, on_stop: halt, auto_stop_in: 1 day, '
      + 'deployment_tier: staging, kubernetes: { namespace: n } } }\n',
      {
        environment: {
          name: 'review', action: 'stop', url: 'https://r', on_stop: 'halt', auto_stop_in: '1 day', deployment_tier: 'staging',
          kubernetes: { namespace: 'n' },
        },
      },
    ],
  ]));

  describe('cache', () => table([
    ['one cache with every key', 'job: { script: x, cache: { key: k, paths: [a], policy: pull, when: always, untracked: true } }\n',
      { cache: [{ key: 'k', untracked: true, policy: 'pull', paths: ['a'], when: 'always' }] }],
    ['defaults: key default, pull-push, on_success', 'job: { script: x, cache: { paths: a } }\n',
      { cache: [{ key: 'default', untracked: false, policy: 'pull-push', paths: ['a'], when: 'on_success' }] }],
    ['a numeric key is text',
      'job: { script: x, cache: { key: 1 } }\n',
      { cache: [{ key: '1', untracked: false, policy: 'pull-push', paths: [], when: 'on_success' }] }],
    ['key:files with a prefix', 'job: { script: x, cache: { key: { files: [Gemfile.lock], prefix: p } } }\n',
      { cache: [{ key: { files: ['Gemfile.lock'], prefix: 'p' }, untracked: false, policy: 'pull-push', paths: [], when: 'on_success' }] }],
    ['a policy from a variable', 'job: { script: x, cache: { policy: $POLICY } }\n',
      { cache: [{ key: 'default', untracked: false, policy: '$POLICY', paths: [], when: 'on_success' }] }],
    ['several caches', 'job: { script: x, cache: [{ key: a }, { key: b }] }\n', {
      cache: [{ key: 'a', untracked: false, policy: 'pull-push', paths: [], when: 'on_success' },
        { key: 'b', untracked: false, policy: 'pull-push', paths: [], when: 'on_success' }],
    }],
    ['cache of default:', 'default: { cache: { key: d } }\njob: { script: x }\n',
      { cache: [{ key: 'd', untracked: false, policy: 'pull-push', paths: [], when: 'on_success' }] }],
  ]));

  describe('artifacts', () => table([
    ['every key', [
      'job:', '  script: x', '  artifacts:', '    name: out', '    paths: dist/', '    exclude: dist/*.tmp', '    untracked: true',
      '    when: always',
      '    expire_in: 1 week', '    expose_as: Build', '    public: false',
      '    reports: { junit: r.xml, dotenv: [a.env], coverage_report: { coverage_format: cobertura, path: c.xml } }', '',
    ].join('\n'), {
      artifacts: {
        name: 'out', paths: ['dist/'], untracked: true, when: 'always', expireIn: '1 week',
        reports: { junit: ['r.xml'], dotenv: ['a.env'], coverage_report: ['c.xml'] }, exclude: ['dist/*.tmp'], exposeAs: 'Build',
        // `public: false` is what `access: developer` says (after 15.2).
        access: 'developer',
      },
    }],
    ['defaults', 'job: { script: x, artifacts: { paths: [a] } }\n',
      { artifacts: { paths: ['a'], untracked: false, when: 'on_success', expireIn: null, reports: { junit: [] } } }],
    ['expire_in in seconds, and never',
      'job: { script: x, artifacts: { expire_in: 3600 } }\nother: { script: x, artifacts: { expire_in: never } }\n',
      { artifacts: { paths: [], untracked: false, when: 'on_success', expireIn: '3600', reports: { junit: [] } } }],
    ['artifacts of default:', 'default: { artifacts: { paths: [d] } }\njob: { script: x }\n',
      { artifacts: { paths: ['d'], untracked: false, when: 'on_success', expireIn: null, reports: { junit: [] } } }],
  ]));

  describe('needs and dependencies', () => table([
    ['needs by name and by hash', 'a: { stage: build, script: x }\nb: { stage: build, script: x }\nc: { stage: build, script: x }\n'
      + 'job: { script: x, needs: [a, { job: b, artifacts: false }, { job: c, optional: true }, { job: d, optional: true }] }\n', {
      needs: ['a', 'b', 'c', 'd'],
      needsDetail: [
        { name: 'a', artifacts: true, optional: false }, { name: 'b', artifacts: false, optional: false },
        { name: 'c', artifacts: true, optional: true }, { name: 'd', artifacts: true, optional: true },
      ],
    }],
    ['needs: [] starts at once', 'job: { script: x, needs: [] }\n', { needs: [], needsDetail: [] }],
    ['no needs: stage order', 'job: { script: x }\n', { needs: null, needsDetail: null, dependencies: null }],
    ['a need in the same stage', 'a: { script: x }\njob: { script: x, needs: [a] }\n', { needs: ['a'] }],
    ['cross-project and pipeline needs only fetch artifacts: not in the DAG',
      'job: { script: x, needs: [{ project: g/p, job: b, ref: main, artifacts: true }, { pipeline: $PARENT, job: c }] }\n', { needs: [] }],
    ['dependencies', 'a: { stage: build, script: x }\njob: { script: x, dependencies: [a] }\n', { dependencies: ['a'] }],
    ['dependencies: [] downloads nothing', 'job: { script: x, dependencies: [] }\n', { dependencies: [] }],
    ['dependencies within needs',
      'a: { stage: build, script: x }\njob: { script: x, needs: [a], dependencies: [a] }\n', { dependencies: ['a'] }],
  ]));

  describe('trigger (bridge jobs)', () => table([
    ['a project path',
      'job: { trigger: g/p }\n', { type: 'bridge', trigger: { project: 'g/p' }, script: [], image: null, timeout: null, tags: [] }],
    ['project, branch, strategy and forward',
      'job: { trigger: { project: g/p, branch: dev, strategy: depend, forward: { yaml_variables: false, pipeline_variables: true } } }\n',
      { trigger: { strategy: 'depend', forward: { yaml_variables: false, pipeline_variables: true }, project: 'g/p', branch: 'dev' } }],
    ['a child pipeline from a local file', 'job: { trigger: { include: /ci/child.yml } }\n', { trigger: { include: 'ci/child.yml' } }],
    ['a child pipeline from one local entry',
      'job: { trigger: { include: [{ local: ci/child.yml }] } }\n', { trigger: { include: 'ci/child.yml' } }],
    ['a child pipeline from several entries',
      'job: { trigger: { include: [a.yml, { project: g/p, file: b.yml }, { template: T.gitlab-ci.yml }] } }\n',
      { trigger: { includes: ['a.yml', { project: 'g/p', file: 'b.yml' }, { template: 'T.gitlab-ci.yml' }] } }],
    ['a child pipeline from a remote file or a job artifact', 'job: { trigger: { include: [{ artifact: gen.yml, job: make }] } }\n',
      { trigger: { includes: [{ artifact: 'gen.yml', job: 'make' }] } }],
    ['a remote address is not a local file',
      'job: { trigger: { include: "https://h/c.yml" } }\n', { trigger: { includes: ['https://h/c.yml'] } }],
    ['a bridge takes no defaults a runner would use',
      'default: { image: d, tags: [t], timeout: 1h, retry: 1, services: [s] }\njob: { trigger: g/p }\n',
      { image: null, tags: [], timeout: null, retry: null, services: [], cache: [], artifacts: null, beforeScript: [] }],
    ['a bridge with needs, variables, rules and when',
      'variables: { G: g }\njob: { trigger: g/p, needs: [], variables: { A: a }, when: manual, rules: [{ when: always }] }\n',
      { needs: [], variables: [{ key: 'G', value: 'g' }, { key: 'A', value: 'a' }], when: 'manual', rules: [{ when: 'always' }] }],
  ]));

  describe('default: and inherit:', () => table([
    ['inherit:default false takes nothing of default:',
      'default: { image: d, before_script: [b], tags: [t], timeout: 1m }\njob: { script: x, inherit: { default: false } }\n',
      { image: null, beforeScript: [], tags: [], timeout: null }],
    ['inherit:default a list takes those keys',
      'default: { image: d, before_script: [b], tags: [t] }\njob: { script: x, inherit: { default: [image, tags] } }\n',
      { image: { name: 'd' }, beforeScript: [], tags: ['t'] }],
    ['inherit:default true',
      'default: { image: d }\njob: { script: x, inherit: { default: true, variables: true } }\n', { image: { name: 'd' } }],
    ['default: null is no default', 'default:\njob: { script: x }\n', { image: null }],
  ]));

  describe('extends and !reference', () => table([
    ['hashes merge deeply, lists are replaced',
      '.base: { script: [a], variables: { A: a, B: b }, tags: [x, y] }\njob: { extends: .base, variables: { B: j }, tags: [z] }\n',
      { script: ['a'], variables: [{ key: 'A', value: 'a' }, { key: 'B', value: 'j' }], tags: ['z'] }],
    ['several bases, the later winning',
      '.a: { script: a, stage: build }\n.b: { script: b }\njob: { extends: [.a, .b] }\n', { script: ['b'], stage: 'build' }],
    ['a chain of bases', '.a: { script: a, stage: build }\n.b: { extends: .a, when: manual }\njob: { extends: .b }\n',
      { script: ['a'], stage: 'build', when: 'manual' }],
    // The OpenTofu component picks its base by input, one of them `extends: null` (no base at all).
    ['extends: null names no base', '.none: { extends: null }\njob: { extends: [.none], script: a, stage: build }\n',
      { script: ['a'], stage: 'build' }],
    ['a visible job as a base',
      'base: { script: a, stage: build }\njob: { extends: base, stage: deploy }\n', { script: ['a'], stage: 'deploy' }],
    ['!reference lists flatten into the script',
      '.s: { script: [a, b] }\njob: { script: [!reference [.s, script], c] }\n', { script: ['a', 'b', 'c'] }],
    ['!reference of a whole hash',
      '.v: { vars: { A: "1" } }\njob: { script: x, variables: !reference [.v, vars] }\n', { variables: [{ key: 'A', value: '1' }] }],
    ['!reference sees the extended jobs',
      '.a: { script: [a] }\n.b: { extends: .a }\njob: { script: !reference [.b, script] }\n', { script: ['a'] }],
    ['!reference through another reference',
      '.a: { s: [a] }\n.b: { s: !reference [.a, s] }\njob: { script: !reference [.b, s] }\n', { script: ['a'] }],
    ['rules assembled from !reference pieces flatten into one list',
      '.up: { rules: [{ if: $A }, { if: $B, when: manual }] }\njob: { script: x, rules: [!reference [.up, rules], { when: never }] }\n',
      { rules: [{ if: '$A' }, { if: '$B', when: 'manual' }, { when: 'never' }] }],
    ['a rules list of only a !reference', '.up: { rules: [{ if: $A }] }\njob: { script: x, rules: [!reference [.up, rules]] }\n',
      { rules: [{ if: '$A' }] }],
    ['needs assembled from !reference pieces',
      '.n: { needs: [a, { job: b, artifacts: false }] }\na: { stage: build, script: x }\nb: { stage: build, script: x }\n'
        + 'job: { script: x, needs: [!reference [.n, needs]] }\n',
      { needs: ['a', 'b'] }],
    ['workflow rules from !reference pieces', '.w: { rules: [{ if: $A }] }\nworkflow: { rules: [!reference [.w, rules], { when: always }] }\n'
      + 'job: { script: x }\n', { name: 'job' }],
    ['anchors and merge keys',
      '.t: &t { script: [a], stage: build }\njob: { <<: *t, stage: deploy }\n', { script: ['a'], stage: 'deploy' }],
  ]));

  describe('rules and only/except as read (select.test.ts evaluates them)', () => table([
    ['every rule key', [
      'a: { stage: build, script: x }', 'job:', '  script: x', '  rules:',
      '    - if: $A == "1"', '      changes: [src/**/*]', '      exists: Dockerfile', '      when: manual', '      allow_failure: true',
      '      variables: { V: "1" }', '      needs: [a]',
      '    - changes: { paths: [lib/*], compare_to: refs/heads/main }', '      start_in: 1h', '    - when: never', '',
    ].join('\n'), {
      rules: [
        { if: '$A == "1"', changes: { paths: ['src/**/*'] }, exists: ['Dockerfile'], when: 'manual', allowFailure: true,
          variables: [{ key: 'V', value: '1' }], needs: [{ name: 'a', artifacts: true, optional: false }] },
        { changes: { paths: ['lib/*'], compareTo: 'refs/heads/main' } },
        { when: 'never' },
      ],
      only: null, except: null,
    }],
    ['only: a list of refs', "job: { script: x, only: [main, '/^rel-/', tags] }\n",
      { only: { refs: ['main', '/^rel-/', 'tags'], variables: null, changes: null, kubernetes: false }, rules: null }],
    ['except: one ref',
      'job: { script: x, except: main }\n', { except: { refs: ['main'], variables: null, changes: null, kubernetes: false } }],
    ['only: every key', 'job: { script: x, only: { refs: main, variables: [$A], changes: src/*, kubernetes: active } }\n',
      { only: { refs: ['main'], variables: ['$A'], changes: ['src/*'], kubernetes: true } }],
  ]));

  describe('parallel and matrix', () => {
    it('parallel: N makes N numbered copies, and needs on the name mean all of them', async () => {
      const { jobs } = await load('job: { stage: build, script: x, parallel: 3 }\nnext: { script: x, needs: [job], dependencies: [job] }\n',
      );
      assert.deepEqual(jobs.map((j) => [j.name, j.node]), [
        ['job 1/3', { index: 1, total: 3 }], ['job 2/3', { index: 2, total: 3 }], ['job 3/3', { index: 3, total: 3 }], ['next', null],
      ]);
      const next = jobs.find((j) => j.name === 'next')!;
      assert.deepEqual(next.needs, ['job 1/3', 'job 2/3', 'job 3/3']);
      assert.deepEqual(next.dependencies, ['job 1/3', 'job 2/3', 'job 3/3']);
    });

    it('matrix entries multiply in order, the first key slowest, values becoming the copies\' variables', async () => {
      const { jobs } = await load([
        'variables: { P: global }',
        'job:', '  stage: build', '  script: x', '  variables: { P: own, Q: q }',
        '  parallel:', '    matrix:', '      - P: [aws, gcp]', '        S: [a, b]', '      - P: azure',
        'pick:', '  script: x', '  needs:', '    - job: job', '      parallel: { matrix: [{ P: gcp, S: [a, b] }] }', '',
      ].join('\n'));
      assert.deepEqual(jobs.map((j) => j.name), [
        'job: [aws, a]', 'job: [aws, b]', 'job: [gcp, a]', 'job: [gcp, b]', 'job: [azure]', 'pick',
      ]);
      const first = jobs[0];
      assert.deepEqual(first.variables, [{ key: 'Q', value: 'q' }, { key: 'P', value: 'aws' }, { key: 'S', value: 'a' }]);
      assert.deepEqual(first.node, { index: 1, total: 5 });
      assert.deepEqual(jobs[5].needs, ['job: [gcp, a]', 'job: [gcp, b]']);
    });
  });

  describe('the configuration as a whole', () => {
    it('lists visible jobs in order, hidden keys and root keywords left out', async () => {
      const loaded = await load([
        'stages: [build, test]', 'variables: { A: "1" }', 'workflow: { name: w }', 'default: { image: i }',
        '.hidden: { script: x }', 'b: { stage: build, script: x }', 'a: { script: x }', '',
      ].join('\n'));
      assert.deepEqual(loaded.jobs.map((j) => j.name), ['b', 'a']);
      assert.deepEqual(loaded.stages, ['.pre', 'build', 'test', '.post']);
      assert.deepEqual(loaded.globals, [{ key: 'A', value: '1' }]);
      assert.deepEqual(loaded.workflow, { rules: null, name: 'w', autoCancel: { onNewCommit: null, onJobFailure: null } });
      assert.deepEqual(STAGES, (await load('job: { script: x }\n')).stages);
    });

    it('keeps the configuration after includes, extends and references for CI lint', async () => {
      const yaml = 'include: a.yml\n.base: { script: [x] }\njob: { extends: .base, tags: !reference [.t, tags] }\n.t: { tags: [t] }\n';
      const loaded = await load(yaml, { files: { 'a.yml': 'inc: { script: i }\n' } });
      assert.deepEqual(JSON.parse(JSON.stringify(loaded.merged)), {
        // A job keeps its `extends:` key in the merged configuration, as the Service's lint shows it.
        '.base': { script: ['x'] }, job: { extends: '.base', script: ['x'], tags: ['t'] }, '.t': { tags: ['t'] }, inc: { script: 'i' },
      });
    });

    it('warns when a last rule may run a job for every pipeline source, unless workflow:rules limit them', async () => {
      const warned = await load('job: { script: x, rules: [{ if: $A }, { when: always }] }\nok: { script: x, rules: [{ when: never }] }\n');
      assert.deepEqual(warned.warnings, [
        'jobs:job may allow multiple pipelines to run for a single action due to `rules:when` clause with no `workflow:rules`'
        + ' - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings',
      ]);
      const limited = await load('workflow: { rules: [{ when: always }] }\njob: { script: x, rules: [{ when: always }] }\n');
      assert.deepEqual(limited.warnings, []);
    });
  });
});
