/**
 * Getting the sources as the Service's runner does (the get_sources stage of shells/abstract.go):
 * GIT_STRATEGY clone (a fresh directory), fetch (the slot's directory reused, cleaned with
 * GIT_CLEAN_FLAGS) or none; the job's refspecs fetched over smart HTTP with the job token as the
 * password of `gitlab-ci-token`, at GIT_DEPTH (the server's depth by default, 0 = everything);
 * the job's sha checked out detached unless GIT_CHECKOUT is false; submodules per
 * GIT_SUBMODULE_STRATEGY (none, normal, recursive).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { JobResponse } from './job-response.ts';

export class StageError extends Error {
  readonly reason: 'script_failure' | 'runner_system_failure';
  constructor(message: string, reason: 'script_failure' | 'runner_system_failure' = 'script_failure') {
    super(message);
    this.reason = reason;
  }
}

export function git(
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; signal: AbortSignal; onOutput: (d: Buffer) => void },
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], signal: o.signal });
    child.stdout.on('data', o.onOutput);
    child.stderr.on('data', o.onOutput);
    child.on('error', (err) => {
      if (err.name !== 'AbortError') o.onOutput(Buffer.from(`${err.message}\n`));
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

export interface SourceOptions {
  job: JobResponse;
  dir: string;
  vars: Map<string, string>;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  onOutput: (d: Buffer) => void;
  notice: (text: string) => void;
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(() => true, () => false);
}

export async function getSources(o: SourceOptions): Promise<void> {
  const strategy = (o.vars.get('GIT_STRATEGY') ?? (o.job.allow_git_fetch === false ? 'clone' : 'fetch')).toLowerCase();
  if (!['clone', 'fetch', 'none'].includes(strategy)) throw new StageError(`unknown GIT_STRATEGY ${strategy}`);
  if (strategy === 'none') {
    await fs.mkdir(o.dir, { recursive: true });
    o.notice('Skipping Git repository setup');
    return;
  }
  const depthVar = o.vars.get('GIT_DEPTH');
  const depth = depthVar !== undefined && /^\d+$/.test(depthVar) ? Number(depthVar) : o.job.git_info.depth ?? 0;
  // The job token goes to git through a credential helper scoped to the server's URL and
  // reading the environment (private to this user), never on a command line (which every user
  // of the host can read) nor into .git/config.
  const repo = new URL(o.job.git_info.repo_url);
  const server = `${repo.protocol}//${repo.host}/`;
  const gitEnv: NodeJS.ProcessEnv = {
    ...o.env,
    KILN_GIT_USERNAME: decodeURIComponent(repo.username), KILN_GIT_PASSWORD: decodeURIComponent(repo.password),
    GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `credential.${server}.helper`,
    GIT_CONFIG_VALUE_0: '!f() { test "$1" = get && echo "username=$KILN_GIT_USERNAME" && echo "password=$KILN_GIT_PASSWORD"; }; f',
  };
  repo.username = '';
  repo.password = '';
  const cleanUrl = repo.toString();
  const run = async (...args: string[]) => {
    const code = await git(args, { cwd: o.dir, env: gitEnv, signal: o.signal, onOutput: o.onOutput });
    if (o.signal.aborted) throw new StageError('canceled');
    if (code !== 0) throw new StageError(`git ${args[0]} exited with code ${code}`);
  };
  const reuse = strategy === 'fetch' && await exists(path.join(o.dir, '.git'));
  if (!reuse) {
    await fs.rm(o.dir, { recursive: true, force: true });
    await fs.mkdir(o.dir, { recursive: true });
  }
  o.notice(depth > 0 ? `Fetching changes with git depth set to ${depth}...` : 'Fetching changes...');
  if (reuse) {
    o.notice(`Reinitialized existing Git repository in ${path.join(o.dir, '.git')}/`);
  } else {
    await run('init', '--quiet');
    o.notice('Created fresh repository.');
  }
  const refspecs = o.job.git_info.refspecs && o.job.git_info.refspecs.length > 0
    ? o.job.git_info.refspecs
    : [
      o.job.git_info.ref_type === 'tag'
        ? `+refs/tags/${o.job.git_info.ref}:refs/tags/${o.job.git_info.ref}`
        : `+refs/heads/${o.job.git_info.ref}:refs/remotes/origin/${o.job.git_info.ref}`,
    ];
  const fetch = ['-c', 'http.userAgent=kiln-runner', '-c', 'gc.auto=0', 'fetch', cleanUrl, '--prune', '--quiet'];
  const depthArgs = depth > 0 ? ['--depth', String(depth)] : [];
  const fetched = await git([...fetch, ...refspecs, ...depthArgs], { cwd: o.dir, env: gitEnv, signal: o.signal, onOutput: o.onOutput });
  if (o.signal.aborted) throw new StageError('canceled');
  if (fetched !== 0) {
    // A branch deleted after its pipeline was created is no longer there to fetch, which fails
    // the whole fetch; the pipeline's persistent ref (refs/pipelines/<id>, which the server offers
    // first while the pipeline runs) still holds the job's commit, so it is fetched alone.
    const pipelineRefs = refspecs.filter((r) => /^\+?refs\/pipelines\/\d+:/.test(r));
    if (pipelineRefs.length === 0 || pipelineRefs.length === refspecs.length) throw new StageError(`git fetch exited with code ${fetched}`);
    o.notice('Fetching the pipeline ref alone: the job\'s branch or tag is no longer there...');
    await run(...fetch, ...pipelineRefs, ...depthArgs);
  }
  // A shallow fetch of the branch misses the job's commit once the branch has moved on (a newer
  // push landed before the job started) when the server offered no pipeline ref (an older kiln, or
  // a repository that was read-only for a storage move when the job started). The commit itself is
  // then fetched: protocol v2 serves any commit reachable from the server's refs.
  const sha = o.job.git_info.sha;
  const silent = { cwd: o.dir, env: gitEnv, signal: o.signal, onOutput: () => undefined };
  if (/^[0-9a-f]{40}$/.test(sha) && await git(['cat-file', '-e', `${sha}^{commit}`], silent) !== 0) {
    await run('-c', 'http.userAgent=kiln-runner', '-c', 'gc.auto=0', '-c', 'protocol.version=2', 'fetch', cleanUrl, '--quiet', sha,
      ...(depth > 0 ? ['--depth', String(depth)] : []));
  }
  if ((o.vars.get('GIT_CHECKOUT') ?? 'true').toLowerCase() === 'false') {
    o.notice('Skipping Git checkout');
  } else {
    o.notice(`Checking out ${o.job.git_info.sha.slice(0, 8)} as detached HEAD (ref is ${o.job.git_info.ref})...`);
    await run('checkout', '-f', '-q', o.job.git_info.sha);
    const clean = o.vars.get('GIT_CLEAN_FLAGS') ?? '-ffdx';
    // A fresh repository has nothing to clean.
    if (reuse && clean.toLowerCase() !== 'none') await run('clean', ...clean.split(/\s+/).filter(Boolean));
  }
  const submodules = (o.vars.get('GIT_SUBMODULE_STRATEGY') ?? 'none').toLowerCase();
  if (submodules === 'normal' || submodules === 'recursive') {
    const recursive = submodules === 'recursive' ? ['--recursive'] : [];
    o.notice(`Updating/initializing submodules${submodules === 'recursive' ? ' recursively' : ''}...`);
    // Relative submodule URLs resolve against origin, kept without credentials.
    await run('config', 'remote.origin.url', cleanUrl);
    await run('submodule', 'init');
    await run('submodule', 'sync', ...recursive);
    await run('submodule', 'update', '--init', ...recursive, ...(depth > 0 ? ['--depth', String(depth)] : []));
  } else if (submodules !== 'none') {
    throw new StageError(`unknown GIT_SUBMODULE_STRATEGY ${submodules}`);
  } else {
    o.notice('Skipping Git submodules setup');
  }
}
