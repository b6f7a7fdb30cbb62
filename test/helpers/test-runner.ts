/**
 * A small runner of our own that speaks the runner protocol the way gitlab-runner does: register
 * with the registration token, ask for jobs, append to the log with Content-Range, upload
 * artifacts as multipart, report success or failure with the job token.
 */
import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';

export const REGISTRATION_TOKEN = 'runner-registration-token-for-tests';

export interface JobPayload {
  id: number;
  token: string;
  job_info: { id: number; name: string; stage: string; project_id: number; project_name: string };
  git_info: { repo_url: string; ref: string; sha: string; before_sha: string; ref_type: string; refspecs: string[]; depth: number };
  variables: { key: string; value: string; public: boolean; masked: boolean; file?: true; raw?: true }[];
  steps: { name: string; script: string[]; timeout: number; when: string; allow_failure: boolean }[];
  image: { name: string } | null;
  artifacts: { artifact_type: string; paths: string[] }[];
  dependencies: { id: number; name: string; token: string; artifacts_file?: { filename: string; size: number } }[];
  job_age: number;
  [k: string]: unknown;
}

export class TestRunner {
  readonly t: TestApp;
  readonly id: number;
  readonly token: string;
  traceSent = new Map<number, number>();

  constructor(t: TestApp, id: number, token: string) {
    this.t = t;
    this.id = id;
    this.token = token;
  }

  static async register(t: TestApp, o: { tags?: string[]; runUntagged?: boolean; description?: string; maximumTimeout?: number } = {}): Promise<TestRunner> {
    const res = await t.request({
      method: 'POST', url: '/api/v4/runners',
      payload: {
        token: REGISTRATION_TOKEN, description: o.description ?? 'test runner',
        info: { name: 'test-runner', version: '15.2.0', revision: 'abcdef', platform: 'linux', architecture: 'amd64', features: { artifacts: true } },
        ...(o.tags ? { tag_list: o.tags.join(',') } : {}),
        ...(o.runUntagged === undefined ? {} : { run_untagged: o.runUntagged }),
        ...(o.maximumTimeout ? { maximum_timeout: o.maximumTimeout } : {}),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as { id: number; token: string };
    return new TestRunner(t, body.id, body.token);
  }

  /** POST /jobs/request: the job payload, or null on 204. */
  async request(): Promise<JobPayload | null> {
    const res = await this.t.request({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: this.token, info: { name: 'test-runner', version: '15.2.0' } } });
    if (res.statusCode === 204) return null;
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as JobPayload;
  }

  async requestJob(): Promise<JobPayload> {
    const job = await this.request();
    assert.ok(job, 'expected a job for the runner');
    return job;
  }

  update(job: { id: number; token: string }, state: 'running' | 'success' | 'failed', failureReason?: string) {
    return this.t.request({
      method: 'PUT', url: `/api/v4/jobs/${job.id}`,
      payload: { token: job.token, state, ...(failureReason ? { failure_reason: failureReason } : {}) },
    });
  }

  /** PATCH …/trace with the range right after what this runner sent so far (or `start`). */
  appendTrace(job: { id: number; token: string }, text: string, start?: number) {
    const from = start ?? this.traceSent.get(job.id) ?? 0;
    const bytes = Buffer.byteLength(text);
    const res = this.t.request({
      method: 'PATCH', url: `/api/v4/jobs/${job.id}/trace`, payload: text,
      headers: { 'job-token': job.token, 'content-type': 'text/plain', 'content-range': `${from}-${from + bytes - 1}` },
    });
    return res.then((r) => {
      if (r.statusCode === 202) this.traceSent.set(job.id, from + bytes);
      return r;
    });
  }

  uploadArtifact(job: { id: number; token: string }, content: Buffer, o: { type?: string; format?: string; filename?: string; expireIn?: string; metadata?: Buffer } = {}) {
    const boundary = `----kiln${Date.now()}`;
    const parts: Buffer[] = [];
    const filePart = (field: string, filename: string, data: Buffer) => {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
      parts.push(data, Buffer.from('\r\n'));
    };
    filePart('file', o.filename ?? 'artifacts.zip', content);
    if (o.metadata) filePart('metadata', 'metadata.gz', o.metadata);
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    const query = new URLSearchParams({ artifact_type: o.type ?? 'archive', artifact_format: o.format ?? 'zip', ...(o.expireIn ? { expire_in: o.expireIn } : {}) });
    return this.t.request({
      method: 'POST', url: `/api/v4/jobs/${job.id}/artifacts?${query}`, payload: Buffer.concat(parts),
      headers: { 'job-token': job.token, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
  }

  /** Takes the next job, writes a line of log and reports `state`; returns the payload. */
  async run(state: 'success' | 'failed' = 'success', failureReason?: string): Promise<JobPayload> {
    const job = await this.requestJob();
    const r1 = await this.appendTrace(job, `Running ${job.job_info.name}\n`);
    assert.equal(r1.statusCode, 202, r1.body);
    const r2 = await this.update(job, state, failureReason ?? (state === 'failed' ? 'script_failure' : undefined));
    assert.equal(r2.statusCode, 200, r2.body);
    return job;
  }
}
