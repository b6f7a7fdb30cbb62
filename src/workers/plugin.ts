/**
 * The job queue and this process's workers as part of the app: `app.jobs` to enqueue and
 * register handlers, `app.workers` to start them (server.ts, after listening; tests) — buildApp
 * never starts them, so tools that build the app without serving run no jobs. Closing the app
 * stops the workers gracefully (job-runner.ts) before the database closes.
 */
import fp from 'fastify-plugin';
import { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { JobRunner } from './job-runner.ts';
import { registerStorageMoveJobs } from './storage-move.worker.ts';
import { registerRepositoryRemovalJobs } from './repository-removal.worker.ts';
import { registerArtifactJobs } from './artifacts.worker.ts';
import { registerMergeRequestJobs } from './merge-requests.worker.ts';
import { registerPipelineScheduleJobs } from './pipeline-schedules.worker.ts';
import { registerWebHookJobs } from './web-hooks.worker.ts';
import { registerStatisticsJobs } from './statistics.worker.ts';
import { registerForkJobs } from './forks.worker.ts';
import { registerIntegrationJobs } from './integrations.worker.ts';
import { registerImportExportJobs } from './import-export.worker.ts';
import { ciEnvFrom } from '../domain/pipelines/ci-env.ts';

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobQueue;
    workers: JobRunner;
  }
}

export default fp(async (app) => {
  const { db, dialect, config } = app.kiln;
  const jobs = new JobQueue(db, dialect);
  registerStorageMoveJobs(jobs, { db, jobs, shards: config.storages, testDelayMs: config.storageMoveTestDelayMs });
  registerRepositoryRemovalJobs(jobs, { db, shards: config.storages });
  registerArtifactJobs(jobs, ciEnvFrom(db, config));
  registerForkJobs(jobs, { db, shards: config.storages });
  registerMergeRequestJobs(jobs, { db, shards: config.storages, env: ciEnvFrom(db, config) });
  registerPipelineScheduleJobs(jobs, ciEnvFrom(db, config), app.log);
  registerWebHookJobs(jobs, {
    db, dataDir: config.dataDir, externalUrl: config.externalUrl, sshPort: config.sshPort, storages: config.storages, log: app.log,
  });
  registerStatisticsJobs(jobs, { db, shards: config.storages });
  registerImportExportJobs(jobs, { db, shards: config.storages, dataDir: config.dataDir, log: app.log });
  registerIntegrationJobs(jobs, {
    db, dataDir: config.dataDir, externalUrl: config.externalUrl, storages: config.storages,
    smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom, asanaApiUrl: config.asanaApiUrl,
  });
  const workers = new JobRunner(jobs, {
    concurrency: config.jobConcurrency,
    pollMs: config.jobPollMs,
    leaseMs: config.jobLeaseSeconds * 1000,
    log: app.log,
  });
  app.decorate('jobs', jobs);
  app.decorate('workers', workers);
  app.addHook('onClose', async () => {
    await workers.stop();
  });
}, { name: 'background-jobs' });
