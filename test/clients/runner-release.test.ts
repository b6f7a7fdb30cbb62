/**
 * The CI `release:` keyword end to end (issue 31, item 5): the server sends the Service's
 * `release-cli create` step, and kiln runner creates the release through the API with the job
 * token after the script succeeds — variables expanded, milestones and asset links included.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { jobTrace, register, scratchHome, startRunner, waitForPipeline, jobsByName, type RunnerDaemon } from '../runner/helpers.ts';
import { parseReleaseCommand } from '../../src/runner/release.ts';
import { releaseScript } from '../../src/http/entities/job-request.ts';

const REGISTRATION_TOKEN = 'kiln-runner-release-registration-token';

describe('the release step', () => {
  it('reads back what the server writes, with the job variables expanded', () => {
    const line = releaseScript({
      name: 'Release $CI_COMMIT_SHORT_SHA', description: 'notes for ${TAG}', tag_name: '$TAG', milestones: ['m1', 'm2'],
      assets: { links: [{ name: 'bin', url: 'https://example.com/$TAG', link_type: 'package' }] },
    });
    assert.equal(line.split(' --')[0], 'release-cli create');
    const vars = new Map([['TAG', 'v1'], ['CI_COMMIT_SHORT_SHA', 'abc'], ['CI_COMMIT_SHA', 'abcdef']]);
    assert.deepEqual(parseReleaseCommand(line, vars), {
      name: 'Release abc', description: 'notes for v1', tag_name: 'v1', milestones: ['m1', 'm2'],
      assets: { links: [{ name: 'bin', url: 'https://example.com/v1', link_type: 'package' }] }, ref: 'abcdef',
    });
    assert.equal(parseReleaseCommand('echo hi', vars), null);
  });
});

describe('kiln runner with release: (end to end)', () => {
  let t: ListeningTestApp;
  let home: string;
  let runner: RunnerDaemon;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    runner = startRunner(home, ['--config', await register(t, home, REGISTRATION_TOKEN)]);
  });
  after(async () => {
    await runner?.stop('SIGTERM');
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('creates the release of a job after its script, through the API with the job token', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
release_job:
  variables: { VERSION: "1.2" }
  script: [echo releasing]
  release:
    tag_name: v$VERSION
    name: Release $VERSION
    description: Built from $CI_COMMIT_SHORT_SHA
    assets:
      links:
        - name: docs
          url: https://example.com/docs
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const job = (await jobsByName(t, p, pipeline.id)).release_job;
    assert.match(await jobTrace(t, p, job.id), /Release created for the tag v1\.2/);
    const res = await t.request({ url: `/api/v4/projects/${p.project.id}/releases/v1.2`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    const r = res.json();
    assert.equal(r.name, 'Release 1.2');
    assert.equal(r.description, `Built from ${r.commit.short_id}`);
    assert.deepEqual(r.assets.links.map((l: { name: string }) => l.name), ['docs']);
    assert.equal(r.author.id, p.owner.id);
  });
});
