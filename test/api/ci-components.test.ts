/**
 * `include: component:` at the HTTP boundary (issue 28, item 2): a component project on this kiln
 * with tags and releases, and projects whose pushes include its components by `$CI_SERVER_FQDN`
 * at `~latest`, a shorthand version, a tag, a branch and a commit SHA, with inputs; read with the
 * permissions of the pipeline's user, so a private component project is not found for a user
 * who cannot read it. CI lint's merged YAML shows the component's jobs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';
import { pushClone, waitForPipelines } from '../helpers/ci-push.ts';

const LINT = [
  'spec:',
  '  inputs:',
  '    stage: { default: test }',
  '    image: { default: "python:3.12" }',
  '    tool: { options: [ruff, flake8], default: ruff }',
  '---',
  '"lint-$[[ inputs.tool ]]":',
  '  stage: $[[ inputs.stage ]]',
  '  image: $[[ inputs.image ]]',
  '  script: ["$[[ inputs.tool ]] check ."]',
  '',
].join('\n');

describe('CI components through a push', () => {
  let t: ListeningTestApp;
  let comps: CiProject;
  let fqdn: string;
  const shas: Record<string, string> = {};

  before(async () => {
    t = await startListeningApp();
    fqdn = new URL(t.url).host;
    comps = await createCiProject(t, { name: 'ci-components' });
    shas.v1 = await pushFiles(t, comps, { 'templates/lint.yml': LINT, 'templates/build/template.yml': 'build-v1: { script: make }\n' }, { tag: '1.0.0' });
    shas.v11 = await pushFiles(t, comps, { 'templates/build/template.yml': 'build-v11: { script: make }\n' }, { tag: '1.1.0' });
    shas.v2rc = await pushFiles(t, comps, { 'templates/build/template.yml': 'build-v2rc: { script: make }\n' }, { tag: '2.0.0-rc1' });
    shas.dev = await pushFiles(t, comps, { 'templates/build/template.yml': 'build-dev: { script: make }\n' }, { branch: 'dev' });
    for (const tag of ['1.0.0', '1.1.0', '2.0.0-rc1']) {
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${comps.project.id}/releases`, token: comps.ownerToken, payload: { tag_name: tag } });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => { await t.close(); });

  /** A fresh project of `owner` (the component project's owner by default) pushed with this configuration. */
  async function pushed(yaml: string, owner = comps.owner) {
    const p = await createCiProject(t, { owner });
    const clone = await pushClone(t.url, p);
    try {
      await clone.commitAndPush({ '.gitlab-ci.yml': yaml });
      const [pipeline] = await waitForPipelines(t, p, 1);
      const detail = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`, token: p.ownerToken }))
        .json() as { yaml_errors: string | null };
      const jobs = detail.yaml_errors ? [] : (await pipelineJobs(t, p, pipeline.id)).map((j) => `${j.stage}/${j.name}`).sort();
      return { p, pipeline, jobs, error: detail.yaml_errors };
    } finally {
      await clone.remove();
    }
  }

  it('includes components at ~latest, a shorthand, a tag, a branch and a SHA, with inputs', async () => {
    const at = (name: string, version: string) => `$CI_SERVER_FQDN/${comps.fullPath}/${name}@${version}`;
    const got = await pushed([
      'stages: [build, test, lint]',
      'include:',
      `  - component: ${at('lint', '~latest')}`,
      '    inputs: { stage: lint, tool: flake8 }',
      `  - component: ${at('lint', '1.0.0')}`,
      `  - component: ${at('build', '1')}`,
      '',
    ].join('\n'));
    assert.equal(got.error, null);
    assert.deepEqual(got.jobs, ['lint/lint-flake8', 'test/build-v11', 'test/lint-ruff']);
    const row = await t.db.selectFrom('ci_builds').select(['options']).where('pipeline_id', '=', got.pipeline.id)
      .where('name', '=', 'lint-flake8').executeTakeFirstOrThrow();
    assert.match(row.options ?? '', /python:3\.12/);
    assert.match(row.options ?? '', /flake8 check \./);

    for (const [version, job] of [['dev', 'build-dev'], [shas.v2rc, 'build-v2rc'], ['2.0.0-rc1', 'build-v2rc'], ['1.0', 'build-v1']]) {
      const one = await pushed(`include: { component: "${fqdn}/${comps.fullPath}/build@${version}" }\n`);
      assert.deepEqual(one.jobs, [`test/${job}`], version);
    }
  });

  it('answers the Service\'s messages for another host, a missing version or component, and a project the user cannot read', async () => {
    const cases: Array<[string, string]> = [
      [`gitlab.example/${comps.fullPath}/build@1.0.0`, 'the component path is not supported'],
      [`${fqdn}/${comps.fullPath}/build@9.9.9`, 'content not found'],
      [`${fqdn}/${comps.fullPath}/nope@1.0.0`, 'content not found'],
      [`${fqdn}/nobody/nothing/build@1.0.0`, "project does not exist or you don't have sufficient permissions"],
    ];
    for (const [address, error] of cases) {
      const got = await pushed(`include: { component: "${address}" }\nown: { script: x }\n`);
      assert.equal(got.error, `Component '${address}' - ${error}`);
    }
    // Another user's pipeline cannot read the private component project.
    const stranger = await createCiProject(t);
    const address = `${fqdn}/${comps.fullPath}/build@1.0.0`;
    const got = await pushed(`include: { component: "${address}" }\nown: { script: x }\n`, stranger.owner);
    assert.equal(got.error, `Component '${address}' - project does not exist or you don't have sufficient permissions`);
  });

  it('shows the component\'s jobs in CI lint\'s merged YAML', async () => {
    const p = await createCiProject(t, { owner: comps.owner });
    await pushFiles(t, p, { 'README.md': 'x\n' });
    const content = `include:\n  - component: ${fqdn}/${comps.fullPath}/lint@1.1.0\n    inputs: { tool: flake8 }\n`;
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken, payload: { content } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { valid: boolean; merged_yaml: string; errors: string[] };
    assert.deepEqual(body.errors, []);
    assert.match(body.merged_yaml, /lint-flake8:/);
  });
});
