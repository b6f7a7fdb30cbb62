/**
 * `spec: inputs` and `$[[ inputs.… ]]` interpolation (issue 28, items 1 and 2), called directly
 * with in-memory files: values and defaults of each type, interpolation in keys and values, a
 * whole-value block keeping its type, the `expand_vars` and `truncate` functions, inputs given to
 * local, project, remote and template includes, and one file included twice with other inputs.
 * The refusals are in error-cases.ts (group spec:inputs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JobSpec } from '../../../src/domain/ci-config/job-entry.ts';
import { load, type Pipeline, type World } from './memory.ts';

const TEMPLATE = [
  'spec:',
  '  inputs:',
  '    stage: { default: test, options: [build, test] }',
  '    name: { description: the job name }',
  '    retries: { type: number, default: 1 }',
  '    manual: { type: boolean, default: false }',
  '    commands: { type: array, default: [make] }',
  '    version: { regex: "^v\\\\d+$", default: v1 }',
  '---',
  '"$[[ inputs.name ]]-job":',
  '  stage: $[[ inputs.stage ]]',
  '  retry: $[[ inputs.retries ]]',
  '  script: $[[ inputs.commands ]]',
  '  variables:',
  '    VERSION: "release $[[ inputs.version ]]"',
  '    MANUAL: "$[[ inputs.manual ]]"',
  '',
].join('\n');

async function jobs(yaml: string, world: World, p: Pipeline = {}): Promise<Map<string, JobSpec>> {
  return new Map((await load(yaml, world, p)).jobs.map((j) => [j.name, j]));
}

const OWN = 'own: { script: x }\n';
const vars = (j: JobSpec | undefined) => Object.fromEntries((j?.variables ?? []).map((v) => [v.key, v.value]));

describe('spec:inputs, called directly', () => {
  it('interpolates given values and defaults, in keys and values, a whole block keeping its type', async () => {
    const got = await jobs(`include: { local: t.yml, inputs: { name: lint, stage: build, retries: 2, commands: [a, b] } }\n${OWN}`,
      { files: { 't.yml': TEMPLATE } });
    const job = got.get('lint-job');
    assert.ok(job, [...got.keys()].join());
    assert.equal(job.stage, 'build');
    assert.deepEqual(job.script, ['a', 'b']);
    assert.equal(job.retry?.max, 2);
    assert.deepEqual(vars(job), { VERSION: 'release v1', MANUAL: 'false' });
  });

  it('checks each value against options, regex and type, and passes the valid ones', async () => {
    const got = await jobs(`include: { local: t.yml, inputs: { name: x, version: v22, manual: true } }\n${OWN}`, { files: { 't.yml': TEMPLATE } });
    assert.deepEqual(vars(got.get('x-job')), { VERSION: 'release v22', MANUAL: 'true' });
    assert.deepEqual(got.get('x-job')?.script, ['make']);
  });

  it('takes a string input\'s null default as no value: nothing in a longer string, null as a whole node', async () => {
    const template = [
      'spec:', '  inputs:', '    options: { default: null }', '    before: { default: null }',
      '    typed: { type: string, default: null }', '---',
      'job:', '  before_script: $[[ inputs.before ]]', '  script: ["meson setup _build $[[ inputs.options ]]"]',
      '  variables:', '    OPTS: $[[ inputs.typed ]]', '',
    ].join('\n');
    const got = await jobs(`include: { local: t.yml }\n${OWN}`, { files: { 't.yml': template } });
    assert.deepEqual(got.get('job')?.script, ['meson setup _build ']);
    assert.deepEqual(got.get('job')?.beforeScript, []);
    assert.deepEqual(vars(got.get('job')), { OPTS: '' });
    // Null is not given: `default:` still applies, as to a job that does not write the key.
    const withDefault = await jobs(`default: { before_script: [setup] }\ninclude: { local: t.yml }\n${OWN}`, { files: { 't.yml': template } });
    assert.deepEqual(withDefault.get('job')?.beforeScript, ['setup']);
    // A value given still replaces it.
    const given = await jobs(`include: { local: t.yml, inputs: { options: -Ddocs=true } }\n${OWN}`, { files: { 't.yml': template } });
    assert.deepEqual(given.get('job')?.script, ['meson setup _build -Ddocs=true']);
  });

  it('includes one file twice with other inputs', async () => {
    const got = await jobs(`include:\n  - { local: t.yml, inputs: { name: one } }\n  - { local: t.yml, inputs: { name: two } }\n${OWN}`,
      { files: { 't.yml': TEMPLATE } });
    assert.deepEqual([...got.keys()].sort(), ['one-job', 'own', 'two-job']);
  });

  it('applies expand_vars and truncate, in order', async () => {
    const body = [
      'spec: { inputs: { path: { default: "$CI_PROJECT_PATH/$UNKNOWN" }, long: { default: abcdefgh } } }',
      '---',
      't: { script: ["$[[ inputs.path | expand_vars ]]", "$[[ inputs.long | truncate(2, 3) ]]",',
      '  "$[[ inputs.path | expand_vars | truncate(0, 1) ]]", "$[[ inputs.long | truncate(20, 3) ]]-"] }',
      '',
    ].join('\n');
    const got = await jobs(`include: { local: t.yml }\n${OWN}`, { files: { 't.yml': body } }, { projectFullPath: 'g/p' });
    assert.deepEqual(got.get('t')?.script, ['g/p/$UNKNOWN', 'cde', 'g', '-']);
  });

  it('gives inputs to project, remote and template includes', async () => {
    const file = (name: string) => `spec: { inputs: { n: } }\n---\n${name}-$[[ inputs.n ]]: { script: x }\n`;
    const got = await jobs([
      'include:',
      '  - { project: g/lib, file: [a.yml, b.yml], inputs: { n: p } }',
      '  - { remote: "https://h.example/r.yml", inputs: { n: r } }',
      '  - { template: T.gitlab-ci.yml, inputs: { n: t } }',
      OWN,
    ].join('\n'), {
      projects: { 'g/lib': { defaultBranch: 'main', refs: { main: { 'a.yml': file('a'), 'b.yml': file('b') } } } },
      remoteHosts: ['h.example'], remote: { 'https://h.example/r.yml': file('r') }, templates: { 'T.gitlab-ci.yml': file('t') },
    });
    assert.deepEqual([...got.keys()].sort(), ['a-p', 'b-p', 'own', 'r-r', 't-t']);
  });

  it('reads the pipeline\'s own header with its defaults; a file without a header is left as written', async () => {
    const got = await jobs('spec: { inputs: { s: { default: build } } }\n---\nstages: [build]\nj: { stage: "$[[ inputs.s ]]", script: x }\n', {});
    assert.equal(got.get('j')?.stage, 'build');
    const plain = await jobs(`include: t.yml\n${OWN}`, { files: { 't.yml': 't: { script: "$[[ inputs.x ]]" }\n' } });
    assert.deepEqual(plain.get('t')?.script, ['$[[ inputs.x ]]']);
  });

  it('interpolates an included file before its own includes are read', async () => {
    const got = await jobs(`include: { local: t.yml, inputs: { f: other } }\n${OWN}`, {
      files: { 't.yml': 'spec: { inputs: { f: } }\n---\ninclude: "$[[ inputs.f ]].yml"\n', 'other.yml': 'o: { script: x }\n' },
    });
    assert.deepEqual([...got.keys()].sort(), ['o', 'own']);
  });
});
