/**
 * Runs the system `git` as a child process (DESIGN, Stack: git), so repository work never
 * blocks the event loop. Output is collected in memory: every command run through here answers
 * with a few lines (object ids, ref names); streams go through src/git/http-backend.ts instead.
 */
import { spawn } from 'node:child_process';

export class GitCommandError extends Error {
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(args: string[], exitCode: number | null, stderr: string) {
    super(`git ${args.join(' ')} exited with ${exitCode}: ${stderr.trim()}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface GitOptions {
  /** The repository (`--git-dir`); omit for commands such as `init` that name their own. */
  gitDir?: string;
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (e.g. 1 from `symbolic-ref -q`). */
  okExitCodes?: number[];
}

/** A clean environment: no user or system config can change what kiln's git commands do. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  };
}

export function runGit(args: string[], o: GitOptions = {}): Promise<{ stdout: string; exitCode: number }> {
  const full = o.gitDir ? ['--git-dir', o.gitDir, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn('git', full, { env: gitEnv(o.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      const exitCode = code ?? -1;
      if (exitCode === 0 || o.okExitCodes?.includes(exitCode)) {
        resolve({ stdout: Buffer.concat(out).toString('utf8'), exitCode });
      } else {
        reject(new GitCommandError(full, code, Buffer.concat(err).toString('utf8')));
      }
    });
    child.stdin.on('error', () => { /* the exit code reports what went wrong */ });
    child.stdin.end(o.input ?? '');
  });
}

export { gitEnv };
