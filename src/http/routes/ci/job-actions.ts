/**
 * What users do to jobs (spec, job transitions table; reference §3.1 for permissions, codes and
 * messages): cancel (201, a silent no-op when nothing can be canceled), retry (201 with the new
 * job; 403 "Job is not retryable"), erase (201; Maintainer or the Developer who started the job;
 * 403 "Job is not erasable!"), play (200; manual jobs only; 400 "Unplayable Job"). The responses
 * carry no user (spec, Job: user null in the cancel, retry, erase and play responses).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { BuildRow } from '../../../db/tables/ci.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { cancelJob, eraseJob, isErasable, playJob, retryJob } from '../../../domain/jobs/job-actions.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { badRequest, forbidden, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadJobExtras } from '../../loaders/jobs.ts';
import { BridgeSchema, JobSchema, presentBridge, presentJob } from '../../entities/job.ts';
import { jobParams, loadJob } from './jobs.ts';
import { route } from '../../route.ts';

const playParams = defineParams({
  id: P.string(),
  job_id: P.integer(),
  job_variables_attributes: P.optional(P.array(P.object({ key: P.string(), value: P.string() }), {
    description: 'variables for this run, [{key, value}]',
  })),
});

/** Variable keys the Service accepts (Ci::JobVariable: letters, digits and '_'). */
const VARIABLE_KEY = /^[a-zA-Z0-9_]{1,255}$/;

const jobActions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const env = () => ciEnvFrom(db, config);
  const presentOne = async (job: BuildRow, extra: { download_url?: null } = {}) => {
    const extras = { ...await loadJobExtras(db, config.externalUrl, [job]), withoutUser: true };
    return job.type === 'bridge' ? presentBridge(job, extras) : { ...presentJob(job, extras), ...extra };
  };

  route(app, {
    method: 'POST', url: '/projects/:id/jobs/:job_id/cancel', auth: 'required', params: jobParams,
    schema: { summary: 'Cancel a job', tags: ['jobs'], response: { 201: JobSchema } },
  }, async ({ request, reply, input }) => {
    const { job } = await loadJob(request, input, 'update_build');
    return reply.code(201).send(await presentOne(await cancelJob(env(), job)));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/jobs/:job_id/retry', auth: 'required', params: jobParams,
    schema: { summary: 'Retry a job: a new job, pending', tags: ['jobs'], response: { 201: JobSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { job } = await loadJob(request, input, 'update_build');
    const result = await retryJob(env(), job, caller.user.id);
    if (!result.ok) throw forbidden('Job is not retryable');
    return reply.code(201).send(await presentOne(result.job));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/jobs/:job_id/erase', auth: 'required', params: jobParams,
    schema: { summary: "Erase a job's artifacts and log", tags: ['jobs'], response: { 201: JobSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, job } = await loadJob(request, input, 'update_build');
    const user = caller.user;
    // erase_build: Maintainer (admin_build), or the Developer who started the job (reference §3.1).
    if (!canOnProject(ctx.actor, 'admin_build', ctx.project) && job.user_id !== user.id) throw forbidden();
    if (!await isErasable(env(), job)) throw forbidden('Job is not erasable!');
    const erased = await eraseJob(env(), job, user.id);
    return reply.code(201).send(await presentOne(erased, { download_url: null }));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/jobs/:job_id/play', auth: 'required', params: playParams,
    schema: { summary: 'Run a manual job', tags: ['jobs'], response: { 200: Type.Union([JobSchema, BridgeSchema]) } },
  }, async ({ request, reply, input, caller }) => {
    // Builds and bridges alike (find_job!), after read_build; playing takes Developer (play_job).
    const { ctx, job } = await loadJob(request, input, 'read_build', undefined);
    if (!canOnProject(ctx.actor, 'update_build', ctx.project)) throw forbidden();
    const variables = input.job_variables_attributes ?? [];
    if (variables.some((v) => !VARIABLE_KEY.test(v.key))) {
      throw validationFailed({ 'job_variables.key': ["can contain only letters, digits and '_'."] });
    }
    const result = await playJob(env(), job, caller.user.id, variables);
    if (!result.ok) throw badRequest('Unplayable Job');
    return reply.code(200).send(await presentOne(result.job));
  });
};

export default jobActions;
