/**
 * Reading jobs (spec, Jobs table; reference §3): a project's jobs, a pipeline's jobs and bridges,
 * one job, its log. read_build is Reporter (anyone on a public project); a job that is not in this
 * project answers the Service's `404 Not found`.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import path from 'node:path';
import type { BuildRow } from '../../../db/tables/ci.ts';
import {
  findJobInProject, pipelineJobsQuery, projectJobsShape, type JobType, type ProjectJobsFrom,
} from '../../../domain/jobs/jobs.queries.ts';
import { JOB_STATUSES, type JobStatus } from '../../../domain/jobs/state-machine.ts';
import { fileSize, readStream, traceRelPath } from '../../../domain/jobs/job-files.ts';
import { findPipelineInProject } from '../../../domain/pipelines/pipelines.queries.ts';
import { recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams, ShapedList } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { loadJobExtras } from '../../loaders/jobs.ts';
import { projectWebUrl } from './pipelines.ts';
import { compileSerializer, exactJson } from '../../entities/serializers.ts';
import {
  BridgeSchema, durationsTick, JOB_ENTITY_COLUMNS, jobDurations, JobSchema, presentBridge, presentJob, type JobEntityRow,
} from '../../entities/job.ts';
import { RememberedPages } from '../../lists/remembered-pages.ts';
import { route } from '../../route.ts';

const scope = P.optional(P.stringOrArray(JOB_STATUSES, { description: 'one status or an array of them' }));
const listParams = defineParams({ id: P.string(), scope, ...paginationParams });
const pipelineJobsParams = defineParams({
  id: P.string(), pipeline_id: P.integer(), scope, include_retried: P.optional(P.boolean({ default: false })), ...paginationParams,
});
const bridgesParams = defineParams({ id: P.string(), pipeline_id: P.integer(), scope, ...paginationParams });
export const jobParams = defineParams({ id: P.string(), job_id: P.integer() });

/** The project (404), read_build (403), then the build in it (404 Not found). */
export async function loadJob(
  request: FastifyRequest, input: { id: string; job_id: number }, action: 'read_build' | 'update_build' | 'admin_build',
  type: JobType | undefined = 'build',
): Promise<{ ctx: ProjectContext; job: BuildRow }> {
  const ctx = await loadProject(request, input.id);
  authorizeProject(ctx, action);
  const job = await findJobInProject(request.server.kiln.db, ctx.project.id, input.job_id, type);
  if (!job) throw recordNotFound();
  return { ctx, job };
}

/** A project's jobs: the entity's columns only. */
const projectJobsList = new ShapedList('project-jobs', {
  from: (db) => db.selectFrom('ci_builds'),
  select: (qb: ProjectJobsFrom) => qb.select(JOB_ENTITY_COLUMNS),
  id: 'ci_builds.id',
});

const JobList = exactJson(Type.Array(JobSchema));
const BridgeList = exactJson(Type.Array(BridgeSchema));
const serialize = { JobList: compileSerializer(JobList), BridgeList: compileSerializer(BridgeList) };

/** For RememberedPages: the jobs of a page whose durations move with the clock, and how to recompute them. */
const ticking = (rows: JobEntityRow[]) => (i: number) => (durationsTick(rows[i])
  ? (entity: { duration: number | null; queued_duration: number | null }) => Object.assign(entity, jobDurations(rows[i], Date.now()))
  : null);

const jobs: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const present = async (rows: JobEntityRow[], ctx: ProjectContext) => {
    const extras = await loadJobExtras(db, config.externalUrl, rows, new Map([[ctx.project.id, projectWebUrl(config.externalUrl, ctx)]]));
    return rows.map((j) => presentJob(j, extras));
  };
  const projectJobsPages = new RememberedPages('project-jobs');
  const pipelineJobsPages = new RememberedPages('pipeline-jobs');

  route(app, {
    method: 'GET', url: '/projects/:id/jobs', auth: 'optional', params: listParams,
    schema: { summary: "A project's jobs, newest first", tags: ['jobs'], response: { 200: JobList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const remembered = projectJobsPages.answer(request, reply);
    if (remembered !== undefined) return remembered;
    const rows = await projectJobsList.paginate(db, request, reply, projectJobsShape(ctx.project.id, input.scope));
    return projectJobsPages.send(request, reply, await present(rows, ctx), serialize.JobList, ticking(rows));
  });

  type PipelineListInput = { id: string; pipeline_id: number; scope?: JobStatus[]; include_retried?: boolean };
  const pipelineList = async (request: FastifyRequest, reply: FastifyReply, input: PipelineListInput, type: JobType) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const pipeline = await findPipelineInProject(db, ctx.project.id, input.pipeline_id);
    if (!pipeline) throw recordNotFound();
    const remembered = pipelineJobsPages.answer(request, reply);
    if (remembered !== undefined) return remembered;
    const rows = await paginate(db, request, reply, pipelineJobsQuery(db, pipeline.id, type, input.scope, input.include_retried === true));
    const extras = await loadJobExtras(db, config.externalUrl, rows, new Map([[ctx.project.id, projectWebUrl(config.externalUrl, ctx)]]));
    if (type === 'build') {
      return pipelineJobsPages.send(request, reply, rows.map((j) => presentJob(j, extras)), serialize.JobList, ticking(rows));
    }
    return pipelineJobsPages.send(request, reply, rows.map((j) => presentBridge(j, extras)), serialize.BridgeList, ticking(rows));
  };

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines/:pipeline_id/jobs', auth: 'optional', params: pipelineJobsParams,
    schema: {
      summary: "A pipeline's jobs, newest first; retried ones only with include_retried", tags: ['jobs'],
      response: { 200: JobList },
    },
  }, ({ request, reply, input }) => pipelineList(request, reply, input, 'build'));

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines/:pipeline_id/bridges', auth: 'optional', params: bridgesParams,
    schema: { summary: "A pipeline's bridge (trigger) jobs", tags: ['jobs'], response: { 200: BridgeList } },
  }, ({ request, reply, input }) => pipelineList(request, reply, input, 'bridge'));

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/:job_id', auth: 'optional', params: jobParams,
    schema: { summary: 'A single job', tags: ['jobs'], response: { 200: JobSchema } },
  }, async ({ request, input }) => {
    const { ctx, job } = await loadJob(request, input, 'read_build');
    return (await present([job], ctx))[0];
  });

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/:job_id/trace', auth: 'optional', params: jobParams,
    schema: { summary: "A job's log (text/plain)", tags: ['jobs'], produces: ['text/plain'] },
  }, async ({ request, reply, input }) => {
    const { job } = await loadJob(request, input, 'read_build');
    const file = path.join(config.dataDir, traceRelPath(job));
    const size = job.trace_size > 0 ? await fileSize(file) : null;
    reply.header('content-disposition', `infile; filename="${job.id}.log"`);
    reply.type('text/plain; charset=utf-8');
    // A job with no log yet, or an erased one, answers 200 with an empty body: the Service sends
    // `build.trace.raw`, which is nil then (reference §3.1), where the spec's table says 404.
    if (size === null || size === 0) return reply.send('');
    // Only the bytes the runner has finished appending (trace_size), streamed from disk.
    return reply.send(readStream(file, Math.min(size, job.trace_size)));
  });
};

export default jobs;
