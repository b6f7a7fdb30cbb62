/**
 * Real-world `.gitlab-ci.yml` files (issue 14): each file of test/fixtures/ci-corpus is pushed
 * with git over HTTP to the default branch `main` of a fresh project, which creates its push
 * pipeline, and a pipeline is then created through the API; both must have exactly the jobs (name,
 * stage, when, allow_failure) written in `<name>.expected.json` beside the file, or its error.
 *
 * KILN_CORPUS_RECORD=1 writes the expected files from what kiln does, for review by hand against
 * the CI/CD YAML reference before they are committed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pipelineJobs } from '../helpers/ci.ts';
import { pushClone, waitForPipelines } from '../helpers/ci-push.ts';

const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'ci-corpus');
const RECORD = process.env.KILN_CORPUS_RECORD === '1';

type Outcome = { jobs: string[] } | { error: string } | { none: true };
interface Expected { api: Outcome; push: Outcome }

const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.yml')).sort();

describe('CI corpus of real .gitlab-ci.yml files', () => {
  let t: ListeningTestApp;
  before(async () => { t = await startListeningApp(); });
  after(async () => { await t.close(); });

  it('holds at least 40 files, each with its expected jobs', () => {
    assert.ok(files.length >= 40, `${files.length} files`);
    if (!RECORD) for (const f of files) assert.ok(fs.existsSync(path.join(DIR, f.replace(/\.yml$/, '.expected.json'))), f);
  });

  for (const file of files) {
    it(`${file}: the push and the API create the expected pipeline`, async () => {
      const p = await createCiProject(t);
      const clone = await pushClone(t.url, p);
      // stage/name:when[:allow_failure], in the order the configuration defines them.
      const describeJobs = async (pipelineId: number) => {
        assert.ok((await pipelineJobs(t, p, pipelineId)).length >= 0);
        const rows = await t.db.selectFrom('ci_builds').select(['name', 'stage', 'run_when', 'allow_failure'])
          .where('pipeline_id', '=', pipelineId).orderBy('id').execute();
        return rows.map((r) => `${r.stage}/${r.name}:${r.run_when}${r.allow_failure ? ':allow_failure' : ''}`);
      };
      try {
        await clone.commitAndPush({ '.gitlab-ci.yml': fs.readFileSync(path.join(DIR, file), 'utf8') }, { message: `Add ${file}` });
        // The push pipeline starts after the push answers; wait for it or for the push's work to end.
        let push: Outcome;
        const list = await waitForPipelines(t, p, 1, 3000).catch(() => []);
        if (list.length === 0) push = { none: true };
        else {
          const detail = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${list[0].id}`, token: p.ownerToken })).json() as { yaml_errors: string | null; source: string };
          assert.equal(detail.source, 'push');
          push = detail.yaml_errors ? { error: detail.yaml_errors } : { jobs: await describeJobs(list[0].id) };
        }
        const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });
        const api: Outcome = res.statusCode === 201
          ? { jobs: await describeJobs((res.json() as { id: number }).id) }
          : { error: (res.json() as { message: { base: string[] } }).message.base[0] };
        assert.ok(res.statusCode === 201 || res.statusCode === 400, res.body);
        const expectedPath = path.join(DIR, file.replace(/\.yml$/, '.expected.json'));
        if (RECORD) {
          fs.writeFileSync(expectedPath, `${JSON.stringify({ api, push }, null, 2)}\n`);
          return;
        }
        const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8')) as Expected;
        assert.deepEqual(api, expected.api);
        assert.deepEqual(push, expected.push);
      } finally {
        await clone.remove();
      }
    });
  }
});
