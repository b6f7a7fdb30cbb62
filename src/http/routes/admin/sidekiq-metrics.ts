/**
 * Background job metrics for administrators (the Service's lib/api/sidekiq_metrics.rb): the
 * queue's backlog and latency, the worker processes, the job totals, and all three at once, read
 * from kiln's own job queue (domain/background-jobs/job-metrics.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { compoundMetrics, jobStats, processMetrics, queueMetrics } from '../../../domain/background-jobs/job-metrics.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { route } from '../../route.ts';

const tags = ['sidekiq'];

const Queues = Type.Record(Type.String(), Type.Object({ backlog: Type.Integer(), latency: Type.Integer() }));
const Process = Type.Object({
  hostname: Type.String(), pid: Type.Integer(), tag: Type.String(), started_at: Type.String(),
  queues: Type.Array(Type.String()), labels: Type.Array(Type.String()), concurrency: Type.Integer(), busy: Type.Integer(),
});
const Jobs = Type.Object({ processed: Type.Integer(), failed: Type.Integer(), enqueued: Type.Integer(), dead: Type.Integer() });

const sidekiqMetrics: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  // `before { authenticated_as_admin! }`.
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  route(app, {
    method: 'GET', url: '/sidekiq/queue_metrics', auth: 'required', preValidation: adminOnly,
    schema: { summary: 'Backlog and latency of the job queue (administrators)', tags, response: { 200: Type.Object({ queues: Queues }) } },
  }, async () => queueMetrics(db));

  route(app, {
    method: 'GET', url: '/sidekiq/process_metrics', auth: 'required', preValidation: adminOnly,
    schema: {
      summary: 'The processes running job workers (administrators)', tags,
      response: { 200: Type.Object({ processes: Type.Array(Process) }) },
    },
  }, async () => processMetrics(db));

  route(app, {
    method: 'GET', url: '/sidekiq/job_stats', auth: 'required', preValidation: adminOnly,
    schema: {
      summary: 'Processed, failed, enqueued and dead job totals (administrators)', tags,
      response: { 200: Type.Object({ jobs: Jobs }) },
    },
  }, async () => jobStats(db));

  route(app, {
    method: 'GET', url: '/sidekiq/compound_metrics', auth: 'required', preValidation: adminOnly,
    schema: {
      summary: 'Queue, process and job metrics together (administrators)', tags,
      response: { 200: Type.Object({ queues: Queues, processes: Type.Array(Process), jobs: Jobs }) },
    },
  }, async () => compoundMetrics(db));
};

export default sidekiqMetrics;
