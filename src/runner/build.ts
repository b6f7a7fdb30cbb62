/**
 * One job from start to end, in the Service runner's stages (common/build.go): prepare the
 * executor, get the sources, restore the cache, download the dependencies' artifacts, run the
 * step script, run after_script, save the cache, upload artifacts, clean up; each stage in its
 * own trace section, then the final state sent with the trace checksum. The job timeout covers
 * everything; after_script has its own (5 minutes, the Service's default).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RUNNER_NAME, RUNNER_VERSION, updateJob } from './api.ts';
import { downloadDependencies, uploadArtifacts } from './artifacts.ts';
import { restoreCaches, saveCaches } from './cache.ts';
import type { RunnerEntry } from './config.ts';
import { dockerHost, pingDocker } from './docker.ts';
import { getSources, StageError } from './git.ts';
import type { FailureReason, JobResponse } from './job-response.ts';
import { stepScript } from './shell.ts';
import { dockerExecutor, shellExecutor, SystemFailure, type Executor } from './executors.ts';
import { JobTrace } from './trace.ts';
import { buildEnvironment, expand, processEnv } from './variables.ts';
import { createRelease, parseReleaseCommand } from './release.ts';

const AFTER_SCRIPT_TIMEOUT_S = 5 * 60;

export interface BuildOutcome {
  state: 'success' | 'failed' | 'canceled';
  reason?: FailureReason;
  exitCode?: number;
  durationMs: number;
  /** False when the final state could not be reported (the server then times the job out). */
  reported: boolean;
}

/** Go's time.Duration text, as the Service's runner prints timeouts: 1h0m0s, 5s. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

function safeProjectPath(job: JobResponse, vars: { key: string; value: string }[]): string {
  const p = vars.find((v) => v.key === 'CI_PROJECT_PATH')?.value ?? '';
  const ok = p !== '' && p.length < 1024 && p.split('/').every((s) => /^[A-Za-z0-9_.-]+$/.test(s) && s !== '.' && s !== '..');
  return ok ? p : `project-${job.job_info.project_id}`;
}

class Failure extends Error {
  readonly reason: FailureReason;
  readonly exitCode?: number;
  constructor(message: string, reason: FailureReason, exitCode?: number) {
    super(message);
    this.reason = reason;
    if (exitCode !== undefined) this.exitCode = exitCode;
  }
}

export async function runBuild(o: { entry: RunnerEntry; job: JobResponse; slot: number; abort: AbortSignal }): Promise<BuildOutcome> {
  const started = Date.now();
  const { entry, job } = o;
  const deadline = started + Math.max(1, job.runner_info?.timeout ?? 3600) * 1000;
  const variables = (job.variables ?? []).filter((v) => v && typeof v.key === 'string');
  const projectPath = safeProjectPath(job, variables);
  const buildsDir = path.resolve(entry.builds_dir);
  const projectDir = path.join(buildsDir, entry.token.slice(0, 8), String(o.slot), projectPath);
  const tmpDir = `${projectDir}.tmp`;
  const trace = new JobTrace(entry.url, job.id, job.token, [job.token, ...variables.filter((v) => v.masked).map((v) => v.value)]);
  const canceled = AbortSignal.any([trace.aborted.signal, o.abort]);
  // The job timeout covers the stages before the script too (a fetch that hangs, for one).
  const overtime = AbortSignal.timeout(Math.max(0, deadline - Date.now()));
  trace.start();
  trace.write(`Running with ${RUNNER_NAME} ${RUNNER_VERSION} (kiln)\n  on ${entry.name || 'kiln runner'} ${entry.token.slice(0, 8)}\n`);

  let success = false;
  let failure: Failure | null = null;
  const section = async <T>(name: string, header: string, fn: () => Promise<T>): Promise<T> => {
    trace.sectionStart(name, header);
    try {
      return await fn();
    } finally {
      trace.sectionEnd(name);
    }
  };
  const notice = (t: string) => trace.notice(t);
  const warn = (t: string) => trace.warning(t);
  const output = (d: Buffer) => trace.write(d);
  let env: NodeJS.ProcessEnv = {};
  let vars = new Map<string, string>();
  let executor: Executor = shellExecutor(projectDir, tmpDir);

  try {
    await section('prepare_executor', `Preparing the "${entry.executor}" executor`, async () => {
      const wantsImage = Boolean(job.image?.name) || (job.services ?? []).length > 0;
      if (wantsImage || entry.executor === 'docker') {
        const host = dockerHost(entry.docker?.host);
        const what = [
          job.image?.name ? `the image "${job.image.name}"` : '',
          ...(job.services ?? []).map((s) => `the service "${s.name}"`),
        ].filter(Boolean).join(', ') || 'a container';
        if (!await pingDocker(host)) {
          throw new Failure(
            `this job needs ${what}, but no Docker daemon is reachable at ${host}; kiln runner never runs such a job on the host`,
            'runner_system_failure',
          );
        }
        if (entry.executor !== 'docker') {
          throw new Failure(
            `this job needs ${what}, and this runner's ${entry.executor} executor runs jobs on the host; register a runner with `
            + `--executor docker for it`,
            'runner_system_failure',
          );
        }
        executor = dockerExecutor({ entry, job, host, projectDir, tmpDir, notice, output });
        await executor.prepare();
        return;
      }
      notice('Using Shell (bash) executor...');
    });
    await section('prepare_script', 'Preparing environment', async () => {
      trace.write(`Running on ${os.hostname()}...\n`);
      await fsp.rm(tmpDir, { recursive: true, force: true });
      await fsp.mkdir(tmpDir, { recursive: true, mode: 0o700 });
      const built = await buildEnvironment({
        variables, jobToken: job.token, projectDir, buildsDir, tmpDir, slot: o.slot, runnerToken: entry.token,
      });
      vars = built.vars;
      env = processEnv(vars, { GIT_TERMINAL_PROMPT: '0' });
      // The runner, not the server, expands variables in cache keys and artifact and cache paths.
      const x = (v: string) => expand(v, vars);
      job.cache = (job.cache ?? []).map((c) => ({
        ...c, ...(c.key ? { key: x(c.key) } : {}), paths: (c.paths ?? []).map(x), fallback_keys: (c.fallback_keys ?? []).map(x),
      }));
      job.artifacts = (job.artifacts ?? []).map((a) => ({
        ...a, ...(a.name ? { name: x(a.name) } : {}), paths: (a.paths ?? []).map(x), exclude: (a.exclude ?? []).map(x),
      }));
    });
    // hooks:pre_get_sources_script and post_get_sources_script run in the get_sources stage, in
    // the project directory, failing the job as a script would.
    const hook = async (name: string) => {
      const h = (job.hooks ?? []).find((x) => x.name === name);
      if (!h || h.script.length === 0) return;
      notice(`Running ${name}...`);
      await fsp.mkdir(projectDir, { recursive: true });
      const res = await executor.run({
        name, script: stepScript(h.script), env, vars, signal: canceled, onOutput: output, timeoutMs: deadline - Date.now(),
      });
      if (res.aborted) throw new Failure('canceled', 'unknown_failure');
      if (res.timedOut) {
        throw new Failure(`execution took longer than ${goDuration(job.runner_info.timeout)} seconds`, 'job_execution_timeout');
      }
      if (res.exitCode !== 0) throw new Failure(`exit code ${res.exitCode ?? 1}`, 'script_failure', res.exitCode ?? 1);
    };
    await section('get_sources', 'Getting source from Git repository', async () => {
      await hook('pre_get_sources_script');
      await getSources({ job, dir: projectDir, vars, env, signal: AbortSignal.any([canceled, overtime]), onOutput: output, notice });
      await hook('post_get_sources_script');
    });
    if ((job.cache ?? []).length > 0) {
      await section('restore_cache', 'Restoring cache', () => restoreCaches({
        caches: job.cache ?? [], cacheDir: entry.cache_dir, projectPath, projectDir, notice, warn,
      }));
    }
    if ((job.dependencies ?? []).some((d) => d.artifacts_file)) {
      await section(
        'download_artifacts', 'Downloading artifacts',
        () => downloadDependencies({ base: entry.url, job, projectDir, tmpDir, notice }),
      );
    }
    const script = (job.steps ?? []).find((s) => s.name === 'script' || s.name === 'run');
    await section('step_script', 'Executing "step_script" stage of the job script', async () => {
      if (!script || script.script.length === 0) return;
      const res = await executor.run({
        name: 'step_script', script: stepScript(script.script, { trace: vars.get('CI_DEBUG_TRACE') === 'true' }),
        env, vars, signal: canceled, onOutput: output, timeoutMs: Math.min(deadline - Date.now(), (script.timeout || Infinity) * 1000),
      });
      if (res.aborted) throw new Failure('canceled', 'unknown_failure');
      if (res.timedOut) {
        throw new Failure(`execution took longer than ${goDuration(job.runner_info.timeout)} seconds`, 'job_execution_timeout');
      }
      if (res.exitCode !== 0) throw new Failure(`exit code ${res.exitCode ?? 1}`, 'script_failure', res.exitCode ?? 1);
    });
    // The `release:` step (after a successful script): kiln runner creates the release itself
    // through the API with the job token, rather than running release-cli (release.ts).
    const releaseStep = (job.steps ?? []).find((s) => s.name === 'release');
    if (releaseStep && releaseStep.script.length > 0) {
      await section('step_release', 'Executing "step_release" stage of the job script', async () => {
        for (const line of releaseStep.script) {
          const request = parseReleaseCommand(line, vars);
          if (!request) throw new Failure(`the release step is not a release-cli create command: ${line.slice(0, 200)}`, 'script_failure', 1);
          notice(`Creating a release for the tag ${request.tag_name ?? ''}...`);
          const result = await createRelease(entry.url, job.job_info.project_id, job.token, request, canceled);
          if (!result.ok) throw new Failure(`creating the release failed: ${result.message}`, 'script_failure', 1);
          notice(`Release created for the tag ${result.tagName}`);
        }
      });
    }
    success = true;
  } catch (err) {
    failure = err instanceof Failure ? err
      : overtime.aborted && !canceled.aborted ? new Failure(
        `execution took longer than ${goDuration(job.runner_info.timeout)} seconds`, 'job_execution_timeout',
      )
        : err instanceof StageError ? new Failure(err.message, err.reason)
          : err instanceof SystemFailure ? new Failure(err.message, 'runner_system_failure')
            : new Failure((err as Error).message, 'runner_system_failure');
  }

  // After a failure to prepare (no environment yet) there is nothing to run after the script.
  if (!canceled.aborted && vars.size > 0) {
    const after = (job.steps ?? []).find((s) => s.name === 'after_script');
    if (after && after.script.length > 0) {
      await section('after_script', 'Running after_script', async () => {
        notice('Running after script...');
        const status = success ? 'success' : 'failed';
        const res = await executor.run({
          name: 'after_script', script: stepScript(after.script), env: { ...env, CI_JOB_STATUS: status },
          vars: new Map([...vars, ['CI_JOB_STATUS', status]]), signal: canceled, onOutput: output, timeoutMs: AFTER_SCRIPT_TIMEOUT_S * 1000,
        });
        if (res.timedOut) warn(`after_script failed: execution took longer than ${goDuration(AFTER_SCRIPT_TIMEOUT_S)}`);
        else if (res.exitCode !== 0 && !res.aborted) warn(
          `after_script failed, but job will continue unaffected: exit code ${res.exitCode ?? 1}`,
        );
      }).catch(() => undefined);
    }
    if (!canceled.aborted && (job.cache ?? []).length > 0) {
      await section('archive_cache', success ? 'Saving cache for successful job' : 'Saving cache for failed job', () => saveCaches({
        caches: job.cache ?? [], success, cacheDir: entry.cache_dir, projectPath, projectDir, notice, warn,
      })).catch((err: unknown) => warn(`saving the cache failed: ${(err as Error).message}`));
    }
    if (!canceled.aborted && (job.artifacts ?? []).length > 0) {
      const name = success ? 'upload_artifacts_on_success' : 'upload_artifacts_on_failure';
      const header = success ? 'Uploading artifacts for successful job' : 'Uploading artifacts for failed job';
      const ok = await section(name, header, () => uploadArtifacts({
        base: entry.url, job, success, projectDir, tmpDir, notice, warn, error: (t) => trace.error(t),
      })).catch(() => false);
      if (!ok && success) {
        success = false;
        failure = new Failure('uploading artifacts failed', 'unknown_failure');
      }
    }
  }
  await section('cleanup_file_variables', 'Cleaning up project directory and file based variables', async () => {
    await executor.cleanup();
    await fsp.rm(tmpDir, { recursive: true, force: true });
  }).catch(() => undefined);

  const durationMs = Date.now() - started;
  if (canceled.aborted) {
    trace.error(
      o.abort.aborted && !trace.aborted.signal.aborted ? 'Job failed (system failure): the runner was stopped' : 'Job failed: canceled',
    );
  } else if (success) {
    trace.notice('Job succeeded');
  } else if (failure) {
    trace.error(
      failure.reason === 'runner_system_failure' ? `Job failed (system failure): ${failure.message}` : `Job failed: ${failure.message}`,
    );
  }
  await trace.finish();

  // The job was canceled (or ended) on the server: there is nothing to report.
  if (trace.aborted.signal.aborted) return { state: 'canceled', durationMs, reported: true };
  const final: Record<string, unknown> = success
    ? { state: 'success' }
    : {
      state: 'failed',
      failure_reason: o.abort.aborted ? 'runner_system_failure' : failure?.reason ?? 'unknown_failure',
      ...(failure?.exitCode !== undefined ? { exit_code: failure.exitCode } : {}),
    };
  // A reason the server did not list in features.failure_reasons goes as unknown_failure, as the
  // Service's runner does (script_failure, runner_system_failure and job_execution_timeout always go).
  const supported = job.features?.failure_reasons;
  const always = ['script_failure', 'runner_system_failure', 'job_execution_timeout'];
  const reason = final.failure_reason;
  if (typeof reason === 'string' && supported && !supported.includes(reason) && !always.includes(reason)) {
    final.failure_reason = 'unknown_failure';
  }
  final.checksum = trace.checksum;
  final.output = { checksum: trace.checksum, bytesize: trace.bytesize };
  let reported = false;
  for (let attempt = 0; attempt < 10 && !reported; attempt++) {
    try {
      const res = await updateJob(entry.url, job.id, job.token, final);
      // 202: the server accepted but has not finished with the log yet; ask again shortly.
      if (res.status === 200 || res.status === 403 || res.status === 404) reported = true;
      else await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    }
  }
  return {
    state: success ? 'success' : 'failed', durationMs, reported,
    ...(success ? {} : {
      reason: final.failure_reason as FailureReason,
      ...(failure?.exitCode !== undefined ? { exitCode: failure.exitCode } : {}),
    }),
  };
}
