/**
 * YAML as the Service's loader reads `.gitlab-ci.yml` (Gitlab::Config::Loader::Yaml over Psych),
 * called directly: YAML 1.1 scalars, duplicate keys, merge keys, the `spec:` header document,
 * `!reference`, and keys written as Ruby symbols (issue 35, item 7), which Psych reads as symbols
 * and the loader then symbolizes with every other key, so `:script:` is `script:` at every level.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Reference } from '../../../src/domain/ci-config/config-error.ts';
import { loadYaml } from '../../../src/domain/ci-config/load-yaml.ts';
import { load, pipeline } from './memory.ts';

type Case = [title: string, yaml: string, value: unknown];

/** Hashes read from YAML have no prototype; compare them as plain objects, references as their paths. */
function plain(v: unknown): unknown {
  if (v instanceof Reference) return { reference: v.path };
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function table(cases: Case[]) {
  for (const [title, yaml, value] of cases) it(title, () => assert.deepEqual(plain(loadYaml(yaml)), value, yaml));
}

describe('CI YAML, read directly', () => {
  describe('scalars and keys', () => table([
    ['YAML 1.1 booleans', 'a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\n', { a: true, b: false, c: true, d: false, e: true, f: false }],
    ['a lone y or n is text', 'a: y\nb: N\n', { a: 'y', b: 'N' }],
    ['numbers, null and empty values', 'a: 1\nb: 1.5\nc: null\nd: ~\ne:\nf: "1"\n', { a: 1, b: 1.5, c: null, d: null, e: null, f: '1' }],
    ['a key written twice keeps its last value', 'a: 1\nb: 2\na: 3\n', { a: 3, b: 2 }],
    ['a null key is the empty key; a number key its text', '~: a\n1: b\n', { '': 'a', 1: 'b' }],
    ['a collection as a key is its JSON', '? [a, b]\n: c\n', { '["a","b"]': 'c' }],
    ['an empty document is nothing', '# only a comment\n', null],
  ]));

  describe('anchors, aliases and merge keys', () => table([
    ['an alias repeats its anchor', 'a: &x [1, 2]\nb: *x\n', { a: [1, 2], b: [1, 2] }],
    ['a merge key: the map\'s own keys win', 'a: &x { p: 1, q: 1 }\nb: { <<: *x, q: 2 }\n', { a: { p: 1, q: 1 }, b: { p: 1, q: 2 } }],
    ['several merge sources: the earlier wins', 'a: &a { p: a }\nb: &b { p: b, q: b }\nc: { <<: [*a, *b] }\n',
      { a: { p: 'a' }, b: { p: 'b', q: 'b' }, c: { p: 'a', q: 'b' } }],
    ['an anchor redefined: an alias means the latest before it', 'a: &x 1\nb: *x\nc: &x 2\nd: *x\n', { a: 1, b: 1, c: 2, d: 2 }],
  ]));

  describe('documents and tags', () => table([
    ['a spec: header document before the configuration',
      'spec:\n  inputs: { a: { default: 1 } }\n---\njob: { script: x }\n', { job: { script: 'x' } }],
    ['two documents without a header: the first', 'a: 1\n---\nb: 2\n', { a: 1 }],
    ['!reference is kept for the normaliser', 'a: !reference [.b, script, 0]\n', { a: { reference: ['.b', 'script', '0'] } }],
  ]));

  describe('keys written as Ruby symbols', () => table([
    ['a job and its keys', ':test_job:\n  :script: echo 1\n', { test_job: { script: 'echo 1' } }],
    ['at every level, in hashes inside lists too',
      ':job:\n  :variables:\n    :A: "1"\n  :rules:\n    - :if: $CI\n      :when: always\n  :script: [x]\n',
      { job: { variables: { A: '1' }, rules: [{ if: '$CI', when: 'always' }], script: ['x'] } }],
    ['in flow style', '{ :job: { :script: x } }\n', { job: { script: 'x' } }],
    ['an explicit key', '? :job\n: 1\n', { job: 1 }],
    ['a quoted symbol loses its quotes', ':"my job":\n  :\'script\': x\n', { 'my job': { script: 'x' } }],
    ['one colon is taken off, as Psych does', '::job: 1\n', { ':job': 1 }],
    ['a lone colon is not a symbol', ':: 1\n', { ':': 1 }],
    ['a quoted key is text, kept as written', '":job": 1\n\':job\': 2\n', { ':job': 2 }],
    ['values are not keys: left as written', 'a: :b\nc: [:d]\n', { a: ':b', c: [':d'] }],
    ['a symbol key and its plain spelling are one key, the later winning', 'job:\n  script: a\n  :script: b\n', { job: { script: 'b' } }],
    ['through anchors and merge keys', '.base: &b\n  :script: x\n:job:\n  <<: *b\n  :stage: build\n',
      { '.base': { script: 'x' }, job: { script: 'x', stage: 'build' } }],
  ]));

  describe('a configuration written with symbol keys', () => {
    it('loads as the same configuration written without', async () => {
      const symbols = [
        ':stages: [build, test]', ':variables:', '  :GLOBAL: g', ':default:', '  :image: ruby',
        ':workflow:', '  :rules:', '    - :when: always',
        ':.base:', '  :tags: [docker]', ':build:', '  :stage: build', '  :extends: .base', '  :script: make',
        '  :artifacts:', '    :paths: [out/]', '    :reports:', '      :junit: r.xml',
        ':test_job:', '  :needs: [build]', '  :script: echo 1', '  :variables:', '    :A: "1"', '  :cache:', '    :key: k', '',
        ':include: inc.yml', '',
      ].join('\n');
      const world = { files: { 'inc.yml': ':included:\n  :script: i\n' } };
      const plainText = symbols.replace(/(^|\s|- ):(?=[\w.])/g, '$1');
      assert.doesNotMatch(plainText, /(^|\s):\w/m);
      const [a, b] = [await load(symbols, world), await load(plainText, world)];
      assert.deepEqual(plain(a.merged), plain(b.merged));
      assert.deepEqual(a.jobs.map((j) => j.name), ['included', 'build', 'test_job']);
      assert.deepEqual(JSON.stringify(a.jobs), JSON.stringify(b.jobs));
      const selected = await pipeline(symbols, world);
      const job = selected.jobs.find((j) => j.name === 'test_job')!;
      assert.deepEqual([job.script, job.needs, job.image, job.cache[0].key], [['echo 1'], ['build'], { name: 'ruby' }, 'k']);
      assert.deepEqual(job.variables, [{ key: 'GLOBAL', value: 'g' }, { key: 'A', value: '1' }]);
    });
  });
});
