/**
 * The GraphQL `jobArtifactsDestroy` mutation (issue 18 item 3), as the Service 15.2's
 * Mutations::Ci::Job::ArtifactsDestroy: Maintainers (destroy_artifacts, the same rule as REST's
 * DELETE /projects/:id/jobs/:job_id/artifacts) with an api-scoped credential delete a job's
 * artifacts (the log stays), and the archive is gone through REST afterwards.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';

const NOT_AVAILABLE = "The resource that you are attempting to access does not exist or you don't have permission to perform this action";

const DESTROY = `mutation($id: CiBuildID!, $cid: String) {
  jobArtifactsDestroy(input: { id: $id, clientMutationId: $cid }) {
    clientMutationId errors destroyedArtifactsCount job { id name artifacts { nodes { fileType } } }
  }
}`;

const gid = (id: number) => `gid://gitlab/Ci::Build/${id}`;

describe('GraphQL API: jobArtifactsDestroy', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  let zip: Buffer;
  const tokens: Record<string, string> = {};
  const users: Record<string, UserRow> = {};

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: make\n' });
    runner = await TestRunner.register(t);
    zip = await makeZip({ 'out/report.txt': 'all good\n' });
    for (const [role, level] of [['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
      users[role] = await createUser(t.db);
      tokens[role] = await createToken(t.db, users[role], { scopes: ['api'] });
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: users[role].id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
    tokens.readApi = await createToken(t.db, users.maintainer!, { scopes: ['read_api'] });
    tokens.stranger = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  const gql = (token: string | null, variables: object) => t.request({
    method: 'POST', url: '/api/graphql', ...(token ? { token } : {}), payload: { query: DESTROY, variables },
  });
  const rest = (url: string, token = p.ownerToken) => t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}${url}`, token });

  /** A finished build whose archive was uploaded. */
  async function jobWithArtifacts(): Promise<JobPayload> {
    await createPipeline(t, p);
    const job = await runner.requestJob();
    const up = await runner.uploadArtifact(job, zip);
    assert.equal(up.statusCode, 201, up.body);
    await runner.appendTrace(job, 'log line\n');
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    return job;
  }

  const assertRefused = async (token: string | null, id: number) => {
    const res = await gql(token, { id: gid(id) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().data, { jobArtifactsDestroy: null }, res.body);
    assert.deepEqual(res.json().errors.map((e: { message: string; path: string[] }) => [e.message, e.path]), [[NOT_AVAILABLE, ['jobArtifactsDestroy']]]);
  };

  it('refuses developers, reporters, read_api tokens, strangers and anonymous callers, and deletes nothing', async () => {
    const job = await jobWithArtifacts();
    for (const token of [tokens.developer!, tokens.reporter!, tokens.readApi!, tokens.stranger!, null]) await assertRefused(token, job.id);
    const archive = await rest(`/jobs/${job.id}/artifacts`);
    assert.equal(archive.statusCode, 200, 'a refused destroy leaves the archive');
    assert.deepEqual(archive.rawPayload, zip);
    // REST agrees: the same callers may not delete there either.
    const restDelete = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/artifacts`, token: tokens.developer! });
    assert.equal(restDelete.statusCode, 403);
  });

  it('deletes a job\'s artifacts for Maintainers, keeps the log, and the archive is gone through REST', async () => {
    const job = await jobWithArtifacts();
    const res = await gql(tokens.maintainer!, { id: gid(job.id), cid: 'destroy-1' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      data: {
        jobArtifactsDestroy: {
          clientMutationId: 'destroy-1', errors: [], destroyedArtifactsCount: 1,
          job: { id: gid(job.id), name: 'build', artifacts: { nodes: [] } },
        },
      },
    });
    const archive = await rest(`/jobs/${job.id}/artifacts`);
    assert.deepEqual([archive.statusCode, archive.json()], [404, { message: '404 Not found' }]);
    assert.equal((await rest(`/jobs/${job.id}/trace`)).statusCode, 200, 'the log stays');
    const shown = (await rest(`/jobs/${job.id}`)).json();
    assert.equal(shown.artifacts_file, undefined);

    // Nothing left to delete: the Service answers a count of 0 with no errors.
    const again = await gql(tokens.maintainer!, { id: gid(job.id) });
    assert.deepEqual(again.json().data.jobArtifactsDestroy.destroyedArtifactsCount, 0);
    assert.deepEqual(again.json().data.jobArtifactsDestroy.errors, []);
  });

  it('answers not available for a job that does not exist, and refuses ids out of range', async () => {
    await assertRefused(tokens.maintainer!, 2_000_000_000);
    const huge = await gql(tokens.maintainer!, { id: gid(2 ** 31) });
    assert.equal(huge.statusCode, 200, huge.body);
    assert.equal(huge.json().data, undefined, huge.body);
    assert.equal(huge.json().errors.length, 1);
  });
});
