/**
 * The job behind a job token (spec, Jobs: GET /job and GET /job/allowed_agents; reference §3.1,
 * §5.1): the token comes as the JOB-TOKEN header, the job_token parameter or a Bearer token, and is
 * valid only while its job runs (401 otherwise). Other credentials get `404 Job Not Found`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findJob } from '../../../domain/jobs/jobs.queries.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { notFound } from '../../errors.ts';
import { loadJobExtras } from '../../loaders/jobs.ts';
import { JobSchema, presentJob } from '../../entities/job.ts';
import { PipelineBasicSchema, presentPipelineBasic } from '../../entities/pipeline.ts';
import { ProjectIdentitySchema, presentProjectIdentity } from '../../entities/project.ts';
import { UserBasicSchema, presentUserBasic } from '../../entities/user.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const AllowedAgentsSchema = Type.Object({
  allowed_agents: Type.Array(Type.Object({ id: Type.Integer(), config_project: ProjectIdentitySchema })),
  job: Type.Object({
    id: Type.Integer(), name: Type.String(), stage: Type.String(), project_id: Type.Integer(),
    project_name: Type.String(),
  }),
  pipeline: PipelineBasicSchema,
  project: ProjectIdentitySchema,
  user: UserBasicSchema,
}, { title: 'JobTokenOwner' });

async function currentJob(request: FastifyRequest, caller: Caller) {
  const credential = caller.credential;
  if (credential.kind !== 'job_token' || credential.jobId === undefined) throw notFound('Job');
  const job = await findJob(request.server.kiln.db, credential.jobId);
  if (!job) throw notFound('Job');
  return job;
}

const jobToken: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'GET', url: '/job', auth: 'required', jobToken: true,
    schema: { summary: 'The job that owns the job token', tags: ['jobs'], response: { 200: JobSchema } },
  }, async ({ request, caller }) => {
    const job = await currentJob(request, caller);
    return presentJob(job, await loadJobExtras(db, config.externalUrl, [job]));
  });

  route(app, {
    method: 'GET', url: '/job/allowed_agents', auth: 'required', jobToken: true,
    schema: { summary: 'The job token owner and the agents it may use', tags: ['jobs'], response: { 200: AllowedAgentsSchema } },
  }, async ({ request, caller }) => {
    const job = await currentJob(request, caller);
    const extras = await loadJobExtras(db, config.externalUrl, [job]);
    const project = (await findProjectById(db, job.project_id))!;
    const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!;
    return {
      // kiln has no cluster agents, so a job may use none.
      allowed_agents: [],
      job: { id: job.id, name: job.name, stage: job.stage, project_id: project.id, project_name: project.name },
      pipeline: presentPipelineBasic(extras.pipelines.get(job.pipeline_id)!, extras.projectWebUrls.get(project.id)!),
      project: presentProjectIdentity(project, { namespace: ns.namespace, fullPath: ns.fullPath, fullName: ns.fullName }),
      user: presentUserBasic(caller.user, {}, { externalUrl: config.externalUrl, canReadProfile: false }),
    };
  });
};

export default jobToken;
