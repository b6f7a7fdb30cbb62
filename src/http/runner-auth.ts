/**
 * Authentication of the runner protocol (lib/api/ci/helpers/runner.rb): runners by their token
 * (403 when unknown), jobs by their job token (403 unless the job exists and the token is its
 * own; `403 Forbidden - Job is not running` with a Job-Status header once it has ended, so a
 * runner stops a job that was canceled or timed out).
 */
import type { FastifyRequest } from 'fastify';
import type { BuildRow, RunnerRow } from '../db/tables/ci.ts';
import { digest, safeEqual } from '../domain/tokens/secret.ts';
import { findRunnerByTokenDigest } from '../domain/runners/runners.queries.ts';
import { recordContact } from '../domain/runners/contacts.ts';
import { findJob, findRunningJobByTokenDigest } from '../domain/jobs/jobs.queries.ts';
import { ApiError, forbidden } from './errors.ts';

export interface RunnerInfo {
  name?: string;
  version?: string;
  revision?: string;
  platform?: string;
  architecture?: string;
}

/** The token a runner sends for its job: JOB-TOKEN header or the `token` parameter. */
export function jobTokenOf(request: FastifyRequest, input: { token?: string }): string | undefined {
  const header = request.headers['job-token'];
  if (typeof header === 'string' && header !== '') return header;
  return input.token || undefined;
}

export async function authenticateRunner(request: FastifyRequest, token: string, info?: RunnerInfo): Promise<RunnerRow> {
  const db = request.server.kiln.db;
  const runner = await findRunnerByTokenDigest(db, digest(token));
  if (!runner) throw forbidden();
  await recordContact(db, runner, { ip_address: request.ip, ...(info ?? {}) });
  return runner;
}

/** The job named by the path, authenticated by its own token, and still running. */
export async function authenticateJob(request: FastifyRequest, jobId: number, token: string | undefined): Promise<BuildRow> {
  const job = await findJob(request.server.kiln.db, jobId);
  // 403 rather than 404 for a missing job, so that a runner stops it (the Service's comment says why).
  if (!job || !token || job.token_digest === null || !safeEqual(job.token_digest, digest(token))) throw forbidden();
  if (job.erased_at !== null) throw forbidden('Job has been erased!');
  if (job.status !== 'running') throw new ApiError(403, { message: '403 Forbidden - Job is not running' }, { 'job-status': job.status });
  return job;
}

/** A running job's token, used to fetch another job's artifacts (authenticate_job_via_dependent_job!). */
export async function authenticatingJob(request: FastifyRequest, token: string | undefined): Promise<BuildRow> {
  const job = token ? await findRunningJobByTokenDigest(request.server.kiln.db, digest(token)) : undefined;
  if (!job) throw forbidden();
  return job;
}
