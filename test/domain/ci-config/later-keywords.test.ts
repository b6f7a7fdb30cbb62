/**
 * Keywords the Service added after 15.2 that real files use (issue 28, item 4), called directly:
 * each accepted with the Service's meaning (the refusals are in error-cases.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load, pipeline } from './memory.ts';

const jobOf = async (yaml: string, name = 'job') => (await load(yaml)).jobs.find((j) => j.name === name)!;

describe('keywords after 15.2', () => {
  it('pages: the published directory joins the artifacts of a Pages job', async () => {
    assert.deepEqual((await jobOf('pages: { script: x, pages: { publish: dist/ } }\n', 'pages')).artifacts?.paths, ['dist']);
    assert.deepEqual((await jobOf('job: { script: x, pages: true, artifacts: { paths: [a] } }\n')).artifacts?.paths, ['a', 'public']);
    assert.deepEqual((await jobOf('pages: { script: x, publish: site }\n', 'pages')).artifacts?.paths, ['site']);
    assert.equal((await jobOf('pages: { script: x, pages: false }\n', 'pages')).artifacts, null);
    // A job named pages without the keywords is as it was.
    assert.equal((await jobOf('pages: { script: x }\n', 'pages')).artifacts, null);
  });

  it('rules:interruptible overrides the job\'s when its rule matches', async () => {
    const config = await pipeline([
      'a: { script: x, interruptible: false, rules: [{ if: $CI_COMMIT_BRANCH == "main", interruptible: true }] }',
      'b: { script: x, interruptible: true, rules: [{ if: $CI_COMMIT_TAG, interruptible: false }, { when: on_success }] }', '',
    ].join('\n'));
    assert.deepEqual(config.jobs.map((j) => [j.name, j.interruptible]), [['a', true], ['b', true]]);
  });

  it('workflow:name with variables expanded, and workflow:auto_cancel', async () => {
    const config = await pipeline([
      'variables: { KIND: nightly }',
      'workflow:',
      '  name: "$KIND build of $CI_COMMIT_REF_NAME"',
      '  auto_cancel: { on_new_commit: interruptible, on_job_failure: all }',
      '  rules: [{ when: always, variables: { KIND: release } }]',
      'job: { script: x }', '',
    ].join('\n'));
    assert.equal(config.name, 'release build of main');
    assert.deepEqual(config.autoCancel, { onNewCommit: 'interruptible', onJobFailure: 'all' });
    assert.equal((await pipeline('workflow: { name: "  $NOTHING  " }\njob: { script: x }\n')).name, null);
  });

  it('workflow:rules:auto_cancel of the matching rule overrides workflow:auto_cancel key by key', async () => {
    const yaml = (branch: string) => [
      'workflow:',
      '  auto_cancel: { on_new_commit: interruptible, on_job_failure: all }',
      '  rules:',
      `    - if: $CI_COMMIT_BRANCH == "${branch}"`,
      '      auto_cancel: { on_new_commit: none }',
      '    - when: always',
      'job: { script: x }', '',
    ].join('\n');
    // The first rule matches on main: its on_new_commit wins, on_job_failure stays the workflow's.
    assert.deepEqual((await pipeline(yaml('main'))).autoCancel, { onNewCommit: 'none', onJobFailure: 'all' });
    // The second rule has no auto_cancel: the workflow's settings as written.
    assert.deepEqual((await pipeline(yaml('other'))).autoCancel, { onNewCommit: 'interruptible', onJobFailure: 'all' });
    const only = 'workflow: { rules: [{ when: always, auto_cancel: { on_job_failure: all } }] }\njob: { script: x }\n';
    assert.deepEqual((await pipeline(only)).autoCancel, { onNewCommit: null, onJobFailure: 'all' });
  });

  it('image:docker and services:docker executor options (platform, user)', async () => {
    const job = await jobOf([
      'job:', '  script: x', '  image: { name: "quay.io/gnome:nightly", docker: { user: root, platform: linux/arm64 } }',
      '  services: [{ name: postgres, docker: { platform: linux/amd64 } }]', '',
    ].join('\n'));
    assert.deepEqual(job.image?.executorOpts, { docker: { user: 'root', platform: 'linux/arm64' } });
    assert.deepEqual(job.services[0].executorOpts, { docker: { platform: 'linux/amd64' } });
  });

  it('cache:fallback_keys, artifacts:access', async () => {
    const job = await jobOf('job: { script: x, cache: { key: k, fallback_keys: [main-k, default] }, artifacts: { paths: [a], access: none } }\n');
    assert.deepEqual(job.cache[0].fallbackKeys, ['main-k', 'default']);
    assert.equal(job.artifacts?.access, 'none');
    assert.equal((await jobOf('job: { script: x, artifacts: { paths: [a], access: all } }\n')).artifacts?.access, undefined);
  });

  it('id_tokens of the job or of default:, left out by inherit:default lists', async () => {
    const yaml = [
      'default: { id_tokens: { VAULT_ID_TOKEN: { aud: https://vault.example } }, image: ruby }',
      'a: { script: x }',
      'b: { script: x, id_tokens: { OTHER: { aud: [one, two] } } }',
      'c: { script: x, inherit: { default: [image] } }', '',
    ].join('\n');
    const jobs = (await load(yaml)).jobs;
    assert.deepEqual(jobs.map((j) => [j.name, j.idTokens, j.image?.name ?? null]), [
      ['a', [{ name: 'VAULT_ID_TOKEN', aud: 'https://vault.example' }], 'ruby'],
      ['b', [{ name: 'OTHER', aud: ['one', 'two'] }], 'ruby'],
      ['c', null, 'ruby'],
    ]);
  });
});
