/**
 * The runner protocol from the runner's side (gitlab-runner network/gitlab.go): register, verify
 * and unregister with the runner token, ask for jobs (the `X-GitLab-Last-Update` long-poll
 * header sent back as `last_update`), report the job's state, append to its log with
 * Content-Range, upload and download artifacts with the job token (JOB-TOKEN header).
 */
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import os from 'node:os';
import type { JobResponse } from './job-response.ts';

export const RUNNER_VERSION = '15.2.0';
export const RUNNER_NAME = 'kiln-runner';

export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** What the runner tells the server about itself (VersionInfo + FeaturesInfo). */
export function runnerInfo(executor: string) {
  return {
    name: RUNNER_NAME, version: RUNNER_VERSION, revision: 'kiln', platform: os.platform(), architecture: os.arch(),
    executor, shell: 'bash',
    features: {
      variables: true, image: false, services: false, artifacts: true, cache: true, shared: true, upload_multiple_artifacts: true,
      upload_raw_artifacts: true, session: false, terminal: false, refspecs: true, masking: true, proxy: false, raw_variables: true,
      artifacts_exclude: true, multi_build_steps: true, trace_reset: false, trace_checksum: true, trace_size: true, vault_secrets: false,
      cancelable: true, return_exit_code: true, fallback_cache_keys: true,
    },
  };
}

const USER_AGENT = `${RUNNER_NAME} ${RUNNER_VERSION} (${os.platform()}/${os.arch()}; node ${process.versions.node})`;

async function call(url: string, init: RequestInit & { json?: unknown; timeoutMs?: number }): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('user-agent', USER_AGENT);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const signals = [AbortSignal.timeout(init.timeoutMs ?? 60_000), ...(init.signal ? [init.signal] : [])];
  return fetch(url, { ...init, headers, body, signal: AbortSignal.any(signals) });
}

async function errorText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  return `${res.status} ${res.statusText}${text ? `: ${text.slice(0, 500)}` : ''}`;
}

export async function registerRunner(base: string, params: {
  token: string; description?: string; tag_list?: string[]; run_untagged?: boolean; locked?: boolean; paused?: boolean;
  access_level?: string; maximum_timeout?: number; maintenance_note?: string; executor: string;
}): Promise<{ id: number; token: string }> {
  const { executor, tag_list, ...rest } = params;
  const res = await call(`${base}/api/v4/runners`, {
    method: 'POST', json: {
      ...rest, ...(tag_list && tag_list.length > 0 ? { tag_list: tag_list.join(',') } : {}),
      info: runnerInfo(executor),
    },
  });
  if (res.status !== 201) throw new ApiError(`registering the runner failed: ${await errorText(res)}`, res.status);
  return await res.json() as { id: number; token: string };
}

/** true when the server knows the token, false when it answers 403; throws on anything else. */
export async function verifyRunner(base: string, token: string): Promise<boolean> {
  const res = await call(`${base}/api/v4/runners/verify`, { method: 'POST', json: { token } });
  if (res.status === 200) return true;
  if (res.status === 403) return false;
  throw new ApiError(`verifying the runner failed: ${await errorText(res)}`, res.status);
}

export async function unregisterRunner(base: string, token: string): Promise<boolean> {
  const res = await call(`${base}/api/v4/runners`, { method: 'DELETE', json: { token } });
  if (res.status === 204) return true;
  if (res.status === 403) return false;
  throw new ApiError(`unregistering the runner failed: ${await errorText(res)}`, res.status);
}

export interface JobRequestResult {
  job: JobResponse | null;
  /** The server's X-GitLab-Last-Update, sent back as last_update on the next request. */
  lastUpdate: string | null;
}

export async function requestJob(
  base: string, token: string, executor: string, lastUpdate: string | null, signal?: AbortSignal,
): Promise<JobRequestResult> {
  // The server may hold a long-polling request for up to ~50 s before answering 204.
  const res = await call(`${base}/api/v4/jobs/request`, {
    method: 'POST', signal, timeoutMs: 90_000,
    json: { token, info: runnerInfo(executor), ...(lastUpdate ? { last_update: lastUpdate } : {}) },
  });
  const next = res.headers.get('x-gitlab-last-update');
  if (res.status === 204) {
    await res.body?.cancel();
    return { job: null, lastUpdate: next };
  }
  if (res.status === 201) return { job: await res.json() as JobResponse, lastUpdate: next };
  throw new ApiError(`requesting a job failed: ${await errorText(res)}`, res.status);
}

export interface UpdateResult {
  status: number;
  /** The job's status on the server (Job-Status header), e.g. `canceled`. */
  jobStatus: string | null;
}

export async function updateJob(base: string, id: number, token: string, body: Record<string, unknown>): Promise<UpdateResult> {
  const res = await call(`${base}/api/v4/jobs/${id}`, { method: 'PUT', json: { token, info: runnerInfo('shell'), ...body } });
  await res.body?.cancel();
  return { status: res.status, jobStatus: res.headers.get('job-status') };
}

export interface PatchResult extends UpdateResult {
  /** Where the server's log ends (Range: 0-N), on 202 and 416. */
  end: number | null;
  /** X-GitLab-Trace-Update-Interval: how often the server wants appends, in seconds. */
  interval: number | null;
}

export async function patchTrace(base: string, id: number, token: string, start: number, chunk: Buffer): Promise<PatchResult> {
  const res = await call(`${base}/api/v4/jobs/${id}/trace`, {
    method: 'PATCH',
    // Content-Range as the Service's runner sends it: start-end, end inclusive.
    headers: { 'job-token': token, 'content-type': 'text/plain', 'content-range': `${start}-${start + chunk.length - 1}` },
    body: new Uint8Array(chunk),
  });
  await res.body?.cancel();
  const range = /^0-(\d+)$/.exec(res.headers.get('range') ?? '');
  const interval = Number(res.headers.get('x-gitlab-trace-update-interval'));
  return {
    status: res.status, jobStatus: res.headers.get('job-status'), end: range ? Number(range[1]) : null,
    interval: Number.isFinite(interval) && interval > 0 ? interval : null,
  };
}

export interface UploadOptions {
  file: string;
  filename: string;
  artifactType: string;
  artifactFormat: string;
  expireIn?: string | null;
  metadata?: { file: string; filename: string };
}

export async function uploadArtifact(base: string, id: number, token: string, o: UploadOptions): Promise<void> {
  const form = new FormData();
  form.append('file', await fs.openAsBlob(o.file), o.filename);
  if (o.metadata) form.append('metadata', await fs.openAsBlob(o.metadata.file), o.metadata.filename);
  const q = new URLSearchParams({ artifact_type: o.artifactType, artifact_format: o.artifactFormat });
  if (o.expireIn) q.set('expire_in', o.expireIn);
  const res = await call(`${base}/api/v4/jobs/${id}/artifacts?${q}`, {
    method: 'POST', headers: { 'job-token': token }, body: form, timeoutMs: 30 * 60_000,
  });
  if (res.status !== 201) throw new ApiError(`uploading artifacts failed: ${await errorText(res)}`, res.status);
  await res.body?.cancel();
}

/** Streams job `id`'s archive to `dest`; the token is the running job's own (authenticate_job_via_dependent_job!). */
export async function downloadArtifact(base: string, id: number, token: string, dest: string): Promise<void> {
  const res = await call(`${base}/api/v4/jobs/${id}/artifacts`, { method: 'GET', headers: { 'job-token': token }, timeoutMs: 30 * 60_000 });
  if (res.status !== 200 || !res.body) throw new ApiError(`downloading artifacts of job ${id} failed: ${await errorText(res)}`, res.status);
  await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), fs.createWriteStream(dest, { mode: 0o600 }));
}
