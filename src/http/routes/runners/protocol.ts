/**
 * The runner protocol as gitlab-runner speaks it (CONTRACT §4; lib/api/ci/runner.rb): register,
 * verify and unregister a runner, ask for a job, report on it. Logs and artifacts are in
 * runner-files.ts. Runners authenticate with their own token, jobs with their job token; user
 * credentials play no part.
 */
import { dependenciesOf } from '../../../domain/runners/job-dependencies.ts';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findPipeline } from '../../../domain/pipelines/pipelines.queries.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { jobArtifacts, latestPipelineJobs } from '../../../domain/jobs/jobs.queries.ts';
import { registerRunner } from '../../../domain/runners/register-runner.ts';
import { registrationTokenOwner } from '../../../domain/runners/registration-token.ts';
import { requestJob } from '../../../domain/runners/request-job.ts';
import { FAILURE_REASONS, RUNNER_STATES, updateJobState } from '../../../domain/runners/update-job-state.ts';
import { deleteRunner } from '../../../domain/runners/runners.queries.ts';
import { forbidden, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { RunnerRegistrationSchema } from '../../entities/runner.ts';
import { mergeRequestVariables } from '../../../domain/pipelines/merge-request-variables.ts';
import { presentJobRequest, type JobRequestContext } from '../../entities/job-request.ts';
import { runnerVariables, type RunnerVariable } from '../../../domain/runners/predefined-variables.ts';
import { expandVariables as expandText } from '../../../domain/ci-config/merge.ts';
import { isProtectedRefOf } from '../../../domain/protected-refs/protected-refs.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { loadSigningKeys, type SigningKeys } from '../../../oauth/keys.ts';
import { signCiIdToken } from '../../../oauth/ci-id-tokens.ts';
import { authenticateJob, authenticateRunner, jobTokenOf } from '../../runner-auth.ts';
import { route } from '../../route.ts';

const info = P.optional(P.object({
  name: P.optional(P.string()), version: P.optional(P.string()), revision: P.optional(P.string()),
  platform: P.optional(P.string()), architecture: P.optional(P.string()),
}, { description: "the runner's metadata" }));

export const ACCESS_LEVELS = ['not_protected', 'ref_protected'] as const;

const registerParams = defineParams({
  token: P.string({ description: 'registration token' }),
  description: P.optional(P.string()),
  maintainer_note: P.optional(P.string({ description: 'deprecated: use maintenance_note' })),
  maintenance_note: P.optional(P.string({ description: 'free-form maintenance notes (1024 characters)' })),
  info,
  active: P.optional(P.boolean({ description: 'deprecated: use paused' })),
  paused: P.optional(P.boolean()),
  locked: P.optional(P.boolean()),
  access_level: P.optional(P.oneOf(ACCESS_LEVELS)),
  run_untagged: P.optional(P.boolean()),
  tag_list: P.optional(P.array(P.string(), { commaSeparated: true })),
  maximum_timeout: P.optional(P.integer()),
});
const tokenParams = defineParams({ token: P.string({ description: "the runner's authentication token" }) });
const requestParams = defineParams({ token: P.string(), last_update: P.optional(P.string()), info });
const updateParams = defineParams({
  id: P.integer(),
  token: P.optional(P.string({ description: 'job token (or the JOB-TOKEN header)' })),
  state: P.optional(P.oneOf(RUNNER_STATES)),
  failure_reason: P.optional(P.oneOf(FAILURE_REASONS)),
  exit_code: P.optional(P.integer()),
  checksum: P.optional(P.string()),
});

const runnerProtocol: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  // The same key files the OAuth server loads at boot (oauth/keys.ts), read once when first needed.
  let keys: Promise<SigningKeys> | null = null;

  /** The job's `id_tokens:` as signed JWT variables; `aud` expands the job's other variables. */
  async function idTokenVariables(c: JobRequestContext): Promise<RunnerVariable[]> {
    const tokens = (JSON.parse(c.job.options) as { id_tokens?: Array<{ name: string; aud: string | string[] }> }).id_tokens;
    if (!tokens || tokens.length === 0) return [];
    keys ??= loadSigningKeys(config.dataDir);
    const { ci } = await keys;
    const vars = new Map(runnerVariables(c).map((v) => [v.key, v.value]));
    const user = c.job.user_id === null ? null : await findUserById(db, c.job.user_id) ?? null;
    const ctx = {
      issuer: config.externalUrl,
      job: { id: c.job.id, ref: c.job.ref, tag: c.job.tag === 1, timeout: c.job.timeout, runnerId: c.runner.id },
      pipeline: { id: c.pipeline.id, source: c.pipeline.source, sha: c.pipeline.sha },
      project: { id: c.project.id, path: c.projectFullPath, namespaceId: c.project.namespace_id, namespacePath: c.namespaceFullPath },
      user: user ? { id: user.id, username: user.username, email: user.email } : null,
      refProtected: await isProtectedRefOf(db, c.project.id, c.job.ref, c.job.tag === 1),
    };
    const out: RunnerVariable[] = [];
    for (const t of tokens) {
      const aud = Array.isArray(t.aud) ? t.aud.map((a) => expandText(a, vars)) : expandText(t.aud, vars);
      out.push({ key: t.name, value: await signCiIdToken(ci, ctx, aud), public: false, masked: true });
    }
    return out;
  }

  route(app, {
    method: 'POST', url: '/runners', auth: 'optional', params: registerParams,
    schema: {
      summary: 'Register a runner with the registration token', tags: ['runner protocol'],
      response: { 201: RunnerRegistrationSchema },
    },
  }, async ({ request, reply, input }) => {
    const result = await registerRunner(db, await registrationTokenOwner(db, config.runnerRegistrationToken, input.token), {
      description: input.description,
      // The deprecated maintainer_note counts only when maintenance_note is absent.
      maintenanceNote: input.maintenance_note ?? input.maintainer_note,
      active: input.paused !== undefined && input.paused !== null ? !input.paused : input.active ?? undefined,
      locked: input.locked ?? undefined,
      runUntagged: input.run_untagged ?? undefined,
      tagList: input.tag_list ?? [],
      accessLevel: input.access_level,
      maximumTimeout: input.maximum_timeout,
      info: input.info,
      ipAddress: request.ip,
    });
    if (!result.ok) throw result.reason === 'forbidden' ? forbidden() : validationFailed(result.errors);
    return reply.code(201).send({ id: result.runner.id, token: result.token, token_expires_at: null });
  });

  route(app, {
    method: 'POST', url: '/runners/verify', auth: 'optional', params: tokenParams,
    schema: { summary: "Check a runner's authentication token", tags: ['runner protocol'], response: { 200: RunnerRegistrationSchema } },
  }, async ({ request, reply, input }) => {
    const token = input.token;
    const runner = await authenticateRunner(request, token);
    return reply.code(200).send({ id: runner.id, token, token_expires_at: null });
  });

  route(app, {
    method: 'DELETE', url: '/runners', auth: 'optional', params: tokenParams,
    schema: { summary: 'Unregister a runner', tags: ['runner protocol'] },
  }, async ({ request, reply, input }) => {
    const runner = await authenticateRunner(request, input.token);
    await deleteRunner(db, runner.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/jobs/request', auth: 'optional', params: requestParams,
    schema: {
      summary: 'A runner asks for a job: 201 with the job, 204 when none matches', tags: ['runner protocol'],
      response: { 201: Type.Unknown(), 204: Type.Null() },
    },
  }, async ({ request, reply, input }) => {
    const runner = await authenticateRunner(request, input.token, input.info);
    const assigned = await requestJob(ciEnvFrom(db, config), runner);
    if (!assigned) return reply.code(204).send();
    const { job, token } = assigned;
    const pipeline = (await findPipeline(db, job.pipeline_id))!;
    const project = (await findProjectById(db, job.project_id))!;
    const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!;
    const deps = dependenciesOf(job, await latestPipelineJobs(db, job.pipeline_id));
    const artifacts = await jobArtifacts(db, deps.map((d) => d.id));
    const mergeRequestVars = await mergeRequestVariables(db, config.externalUrl, {
      projectId: pipeline.project_id, ref: pipeline.ref, tag: pipeline.tag === 1, sha: pipeline.sha, source: pipeline.source,
      mergeRequestId: pipeline.merge_request_id,
    });
    const context: JobRequestContext = {
      job, token, runner, pipeline, project, projectFullPath: `${ns.fullPath}/${project.path}`, namespaceFullPath: ns.fullPath,
      dependencies: deps.map((d) => ({ job: d, artifacts: artifacts.filter((a) => a.job_id === d.id) })),
      externalUrl: config.externalUrl, serverVersion: app.kiln.version.version, ciVariables: assigned.variables,
      deployVariables: assigned.deployVariables, environmentVariables: assigned.environmentVariables,
      mergeRequestVariables: mergeRequestVars, persistentRef: assigned.persistentRef,
    };
    context.idTokenVariables = await idTokenVariables(context);
    return reply.code(201).type('application/json').send(JSON.stringify(presentJobRequest(context)));
  });

  route(app, {
    method: 'PUT', url: '/jobs/:id', auth: 'optional', params: updateParams,
    schema: { summary: 'A runner reports the state of its job', tags: ['runner protocol'] },
  }, async ({ request, reply, input }) => {
    const job = await authenticateJob(request, input.id, jobTokenOf(request, input));
    const updated = input.state ? await updateJobState(
      ciEnvFrom(db, config), job, input.state, input.failure_reason, input.exit_code,
    ) : job;
    reply.header('job-status', updated.status);
    return reply.code(200).send();
  });
};

export default runnerProtocol;
