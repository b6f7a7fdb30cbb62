/**
 * `kiln runner run` (the Service runner's commands/multi.go): for every configured runner, ask
 * for jobs while a slot is free (at most `concurrent` jobs at once overall and `limit` per
 * runner), sending the server's X-GitLab-Last-Update back as `last_update`; wait
 * `check_interval` after a 204, back off (up to a minute) after errors. The first SIGTERM,
 * SIGINT or SIGQUIT stops asking and lets running jobs finish; a second one stops the jobs at
 * once (killing their processes, reporting runner_system_failure) and exits.
 */
import { ApiError, requestJob } from './api.ts';
import { runBuild } from './build.ts';
import type { RunnerConfig, RunnerEntry } from './config.ts';
import type { JobResponse } from './job-response.ts';

export interface RunOptions {
  once?: boolean;
  log?: (line: string) => void;
}

function defaultLog(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

function variable(job: JobResponse, key: string): string {
  return (job.variables ?? []).find((v) => v.key === key)?.value ?? '?';
}

export class RunnerProcess {
  private readonly config: RunnerConfig;
  private readonly opts: RunOptions;
  private readonly log: (line: string) => void;
  private readonly running = new Map<number, Promise<void>>();
  private readonly perRunner = new Map<string, number>();
  private readonly slots: boolean[];
  private readonly stopAsking = new AbortController();
  private readonly abortJobs = new AbortController();
  private wake: (() => void) | null = null;
  private taken = 0;
  finished = 0;

  constructor(config: RunnerConfig, opts: RunOptions = {}) {
    this.config = config;
    this.opts = opts;
    this.log = opts.log ?? defaultLog;
    this.slots = new Array<boolean>(config.concurrent).fill(false);
  }

  /** First call: finish running jobs and stop. Second: abort them. */
  stop(signal: string): void {
    if (!this.stopAsking.signal.aborted) {
      this.log(`${signal} received: no new jobs; waiting for ${this.running.size} running job(s) to finish (send it again to abort them)`);
      this.stopAsking.abort();
      this.wake?.();
    } else if (!this.abortJobs.signal.aborted) {
      this.log(`${signal} received again: aborting ${this.running.size} running job(s)`);
      this.abortJobs.abort();
    }
  }

  private freeSlot(): number {
    return this.slots.indexOf(false);
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.stopAsking.signal;
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private waitForSlot(): Promise<void> {
    return new Promise((resolve) => {
      const prev = this.wake;
      this.wake = () => {
        this.wake = null;
        prev?.();
        resolve();
      };
    });
  }

  private startJob(entry: RunnerEntry, job: JobResponse): void {
    const slot = this.freeSlot();
    this.slots[slot] = true;
    this.perRunner.set(entry.token, (this.perRunner.get(entry.token) ?? 0) + 1);
    this.log(
      `job ${job.id} received: "${job.job_info.name}" (stage ${job.job_info.stage}) of project `
      + `${variable(job, 'CI_PROJECT_PATH')} (id ${job.job_info.project_id}), pipeline ${variable(job, 'CI_PIPELINE_ID')}, `
      + `runner ${entry.token.slice(0, 8)}, slot ${slot}`,
    );
    const p = runBuild({ entry, job, slot, abort: this.abortJobs.signal }).then((out) => {
      const how = out.state === 'success' ? 'succeeded'
        : out.state === 'canceled' ? 'was canceled on the server'
          : `failed (${out.reason}${out.exitCode !== undefined ? `, exit code ${out.exitCode}` : ''})`;
      this.log(
        `job ${job.id} ${how} after ${(out.durationMs / 1000).toFixed(1)} `
        + `s${out.reported ? '' : '; its final state could not be reported'}`,
      );
    }, (err: unknown) => {
      this.log(`job ${job.id} ended with an internal error: ${(err as Error).message}`);
    }).finally(() => {
      this.slots[slot] = false;
      this.perRunner.set(entry.token, (this.perRunner.get(entry.token) ?? 1) - 1);
      this.running.delete(job.id);
      this.finished += 1;
      this.wake?.();
    });
    this.running.set(job.id, p);
  }

  private async poll(entry: RunnerEntry): Promise<void> {
    let lastUpdate: string | null = null;
    let backoff = 0;
    while (!this.stopAsking.signal.aborted) {
      const full = this.freeSlot() < 0 || (entry.limit > 0 && (this.perRunner.get(entry.token) ?? 0) >= entry.limit)
        || (this.opts.once && this.taken > 0);
      if (full) {
        await Promise.race([this.waitForSlot(), this.sleep(60_000)]);
        if (this.opts.once && this.taken > 0) return;
        continue;
      }
      try {
        // Not aborted on stop: a request cut short could lose a job the server has just assigned.
        const res = await requestJob(entry.url, entry.token, entry.executor, lastUpdate);
        lastUpdate = res.lastUpdate;
        backoff = 0;
        if (res.job && this.stopAsking.signal.aborted) {
          // Taken while stopping: run it anyway rather than leave it running with nobody on it.
          this.startJob(entry, res.job);
          this.taken += 1;
          return;
        }
        if (res.job) {
          this.taken += 1;
          this.startJob(entry, res.job);
          continue;
        }
        await this.sleep(this.config.check_interval * 1000);
      } catch (err) {
        if (this.stopAsking.signal.aborted) return;
        if (err instanceof ApiError && err.status === 403) {
          this.log(
            `runner ${entry.token.slice(0, 8)} at ${entry.url}: the server does not know this token (403); verify or register again`,
          );
        } else {
          this.log(`runner ${entry.token.slice(0, 8)} at ${entry.url}: ${(err as Error).message}`);
        }
        backoff = Math.min(60_000, backoff === 0 ? 1000 : backoff * 2);
        await this.sleep(backoff);
      }
    }
  }

  async run(): Promise<void> {
    if (this.config.runners.length === 0) throw new Error('no runners configured: run `kiln runner register` first');
    this.log(`kiln runner starting: ${this.config.runners.length} runner(s), concurrent = ${this.config.concurrent}`);
    const pollers = this.config.runners.map((entry) => this.poll(entry));
    if (this.opts.once) {
      await Promise.race([Promise.all(pollers), new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (this.taken > 0 || this.stopAsking.signal.aborted) {
            clearInterval(check);
            resolve();
          }
        }, 50);
      })]);
      this.stopAsking.abort();
      this.wake?.();
    } else {
      await Promise.all(pollers);
    }
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
    this.log('kiln runner stopped');
  }
}
