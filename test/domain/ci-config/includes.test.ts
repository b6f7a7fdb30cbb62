/**
 * `include:` of every kind, called directly with in-memory files (issue 27, item 5): local files
 * (with wildcards), files of other projects (with their own local includes), remote files from
 * allowed hosts, templates; rules on includes, `$VARIABLES` in locations, and the merge order.
 * The refusals of each kind are in error-cases.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load, type FetchLog, type Pipeline, type World } from './memory.ts';

type Case = [title: string, yaml: string, world: World, jobs: string[], pipeline?: Pipeline];

const J = (name: string) => `${name}: { script: x }\n`;

const PROJECTS: World['projects'] = {
  'g/lib': {
    defaultBranch: 'main',
    refs: {
      main: { 'ci/a.yml': `include: ci/common.yml\n${J('lib-a')}`, 'ci/b.yml': J('lib-b'), 'ci/common.yml': J('lib-common') },
      v1: { 'ci/a.yml': J('lib-a-v1') },
    },
  },
};

const CASES: Case[] = [
  ['a local file by its path', 'include: ci/a.yml\n', { files: { 'ci/a.yml': J('a') } }, ['a']],
  ['a local file with a leading slash', 'include: /ci/a.yml\n', { files: { 'ci/a.yml': J('a') } }, ['a']],
  ['local: with the .yaml extension', 'include: { local: ci/a.yaml }\n', { files: { 'ci/a.yaml': J('a') } }, ['a']],
  ['a list of local files, in order', 'include: [b.yml, a.yml]\n', { files: { 'a.yml': J('a'), 'b.yml': J('b') } }, ['b', 'a']],
  ['a wildcard: each matching file, as the tree lists them', 'include: "ci/*.yml"\n',
    { files: { 'ci/b.yml': J('b'), 'ci/a.yml': J('a'), 'ci/sub/c.yml': J('c'), 'ci/d.txt': 'x' } }, ['a', 'b']],
  ['a wildcard through directories', 'include: { local: "ci/**/*.yml" }\n',
    { files: { 'ci/sub/c.yml': J('c'), 'ci/sub/deeper/d.yml': J('d'), 'other/e.yml': J('e') } }, ['c', 'd']],
  ['the same file twice in one list is read once', 'include: [a.yml, /a.yml]\n', { files: { 'a.yml': J('a') } }, ['a']],
  ['an included file includes another',
    'include: a.yml\n', { files: { 'a.yml': `include: b.yml\n${J('a')}`, 'b.yml': J('b') } }, ['b', 'a']],
  ['the same file from two branches of the tree', 'include: [a.yml, b.yml]\n',
    { files: { 'a.yml': `include: c.yml\n${J('a')}`, 'b.yml': `include: c.yml\n${J('b')}`, 'c.yml': J('c') } }, ['c', 'a', 'b']],
  ['a project file at its default branch', 'include: { project: g/lib, file: ci/b.yml }\n', { projects: PROJECTS }, ['lib-b']],
  ['a project file at a ref', 'include: { project: g/lib, ref: v1, file: ci/a.yml }\n', { projects: PROJECTS }, ['lib-a-v1']],
  ['several files of one project',
    'include: { project: g/lib, file: [ci/b.yml, /ci/a.yml] }\n', { projects: PROJECTS }, ['lib-b', 'lib-common', 'lib-a']],
  ["a local include in a project's file is a file of that project", 'include: { project: g/lib, file: ci/a.yml }\n',
    { projects: PROJECTS, files: { 'ci/common.yml': J('mine') } }, ['lib-common', 'lib-a']],
  ['a remote file from an allowed host', 'include: "https://h.example/ci.yml"\n',
    { remoteHosts: ['h.example'], remote: { 'https://h.example/ci.yml': J('remote') } }, ['remote']],
  ['remote: with a port the host list names', 'include: { remote: "http://h.example:8080/ci.yml" }\n',
    { remoteHosts: ['H.EXAMPLE:8080'], remote: { 'http://h.example:8080/ci.yml': J('remote') } }, ['remote']],
  ['a host listed without a port allows every port', 'include: { remote: "http://h.example:8080/ci.yml" }\n',
    { remoteHosts: ['h.example'], remote: { 'http://h.example:8080/ci.yml': J('remote') } }, ['remote']],
  ['a template', 'include: { template: Jobs/Build.gitlab-ci.yml }\n', { templates: { 'Jobs/Build.gitlab-ci.yml': J('tpl') } }, ['tpl']],
  ['every kind at once', [
    'include:', '  - local: a.yml', '  - project: g/lib', '    file: ci/b.yml', '  - remote: "https://h.example/r.yml"',
    '  - template: T.gitlab-ci.yml', '  - "https://h.example/s.yml"', '',
  ].join('\n'), {
    files: { 'a.yml': J('a') }, projects: PROJECTS, templates: { 'T.gitlab-ci.yml': J('t') }, remoteHosts: ['h.example'],
    remote: { 'https://h.example/r.yml': J('r'), 'https://h.example/s.yml': J('s') },
  }, ['a', 'lib-b', 'r', 't', 's']],
  ['variables in locations', 'include: { project: $CI_PROJECT_PATH, ref: $CI_COMMIT_REF_NAME, file: "ci/${NAME}.yml" }\n',
    { projects: { 'g/p': { refs: { dev: { 'ci/x.yml': J('x') } } } } }, ['x'],
    { ref: 'dev', projectFullPath: 'g/p', variables: { NAME: 'x' } }],
  ['rules: if holds',
    'include: [{ local: a.yml, rules: [{ if: $CI_COMMIT_BRANCH == "main" }] }]\n', { files: { 'a.yml': J('a') } }, ['a', 'own']],
  ['rules: if fails: the file is not read', 'include: [{ local: missing.yml, rules: [{ if: $CI_COMMIT_TAG }] }]\n', {}, ['own']],
  ['rules: exists holds', 'include: [{ local: a.yml, rules: [{ exists: [Dockerfile, "**/*.go"] }] }]\n',
    { files: { 'a.yml': J('a'), 'cmd/main.go': '' } }, ['a', 'own']],
  ['rules: exists fails', 'include: [{ local: a.yml, rules: [{ exists: Dockerfile }] }]\n', { files: { 'a.yml': J('a') } }, ['own']],
  ['rules: when never drops it',
    'include: [{ local: a.yml, rules: [{ if: $CI, when: never }, { when: always }] }]\n', { files: { 'a.yml': J('a') } }, ['own']],
  ['rules: a later rule holding',
    'include: [{ local: a.yml, rules: [{ if: $NOPE }, { if: $CI }] }]\n', { files: { 'a.yml': J('a') } }, ['a', 'own']],
  ['rules: empty list drops it', 'include: [{ local: a.yml, rules: [] }]\n', { files: { 'a.yml': J('a') } }, ['own']],
  ['include: null includes nothing', 'include:\n', {}, ['own']],
  // include:rules:changes (after 15.2), compared as a job's rules:changes.
  ['rules: changes holds for a push that changed a matching path',
    'include: [{ local: a.yml, rules: [{ changes: ["src/**/*.c"] }] }]\n', { files: { 'a.yml': J('a') } }, ['a', 'own'],
    { changed: ['README.md', 'src/lib/x.c'] }],
  ['rules: changes fails for a push that changed none', 'include: [{ local: a.yml, rules: [{ changes: [src/*] }] }]\n',
    { files: { 'a.yml': J('a') } }, ['own'], { changed: ['README.md'] }],
  ['rules: changes holds when there is nothing to compare with',
    'include: [{ local: a.yml, rules: [{ changes: { paths: [src/*] } }] }]\n', { files: { 'a.yml': J('a') } }, ['a', 'own']],
  ['rules: changes:compare_to compares with that ref',
    'include: [{ local: a.yml, rules: [{ changes: { paths: [doc/*], compare_to: main } }] }]\n', { files: { 'a.yml': J('a') } },
    ['a', 'own'], { changed: [], comparedTo: { main: ['doc/x.md'] } }],
];

describe('CI includes, called directly', () => {
  describe('which jobs each include brings', () => {
    for (const [title, yaml, world, jobs, pipeline] of CASES) {
      it(title, async () => {
        // Every case has a job of its own, so a configuration made only of includes is still valid.
        const loaded = await load(`${yaml}own: { script: x }\n`, world, pipeline);
        assert.deepEqual(loaded.jobs.map((j) => j.name).filter((n) => n !== 'own' || jobs.includes('own')), jobs);
      });
    }
  });

  it('merges included files in order, later over earlier, and the including file over all', async () => {
    const loaded = await load([
      'include: [a.yml, b.yml]', 'variables: { V: own }', 'job:', '  stage: deploy', '',
    ].join('\n'), {
      files: {
        'a.yml': 'variables: { V: a, A: a }\njob: { script: a, stage: build, tags: [a], variables: { X: a, Y: a } }\n',
        'b.yml': 'variables: { V: b }\njob: { script: b, variables: { Y: b } }\n',
      },
    });
    assert.deepEqual(loaded.globals, [{ key: 'V', value: 'own' }, { key: 'A', value: 'a' }]);
    const job = loaded.jobs[0];
    assert.deepEqual([job.script, job.stage, job.tags], [['b'], 'deploy', ['a']]);
    assert.deepEqual(job.ownVariables, [{ key: 'X', value: 'a' }, { key: 'Y', value: 'b' }]);
  });

  it('lets an included job extend and reference what another file defines', async () => {
    const loaded = await load('include: [base.yml, jobs.yml]\n', {
      files: {
        'base.yml': '.base: { script: [base], stage: build }\n',
        'jobs.yml': 'job: { extends: .base, after_script: !reference [.base, script] }\n',
      },
    });
    assert.deepEqual([loaded.jobs[0].script, loaded.jobs[0].stage, loaded.jobs[0].afterScript], [['base'], 'build', ['base']]);
  });

  it('asks a remote host without following redirects and with a timeout, once per file', async () => {
    const log: FetchLog[] = [];
    const url = 'https://h.example/ci.yml';
    await load(`include: ["${url}", { remote: "${url}" }]\n`, { remoteHosts: ['h.example'], remote: { [url]: J('r') } }, {}, log);
    assert.deepEqual(log, [{ url, redirect: 'manual', timed: true }]);
  });

  it('reads up to 100 files', async () => {
    const files = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}.yml`, J(`j${i}`)]));
    const loaded = await load(`include: "f*.yml"\n`, { files });
    assert.equal(loaded.jobs.length, 100);
  });
});
