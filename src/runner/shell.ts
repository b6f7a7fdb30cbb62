/**
 * Running a step's commands in bash as the Service's runner does (shells/bash.go): one bash
 * process per step with `set -eo pipefail` (and `set +o noclobber`), each command echoed in green
 * with a `$ ` prompt before it runs, the whole body run through `: | eval $'…'` so that no command
 * reads the runner's stdin. The process gets a process group of its own, so that a timeout or a
 * cancel kills everything the script started.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

/** bash ANSI-C quoting ($'…'), byte-exact for any text. */
export function ansiC(text: string): string {
  let out = "$'";
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** The script of one step: every command echoed as `$ command` (green), then run. */
export function stepScript(commands: string[], o: { trace?: boolean } = {}): string {
  const body: string[] = [];
  for (const command of commands) {
    const shown = command.split('\n').length > 1 ? `${command.split('\n')[0]} # collapsed multi-line command` : command;
    body.push(`echo ${ansiC(`\x1b[32;1m$ ${shown}\x1b[0;m`)}`);
    body.push(command);
  }
  return [
    '#!/usr/bin/env bash',
    ...(o.trace ? ['set -o xtrace'] : []),
    'set -eo pipefail',
    'set +o noclobber',
    `: | eval ${ansiC(body.join('\n'))}`,
    'exit 0',
    '',
  ].join('\n');
}

export interface RunResult {
  exitCode: number | null;
  /** Ended by the deadline (`timedOut`) or by `signal` (canceled), with its process group killed. */
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Runs `script` with bash in `cwd`; output (stdout and stderr, as they come) goes to `onOutput`.
 * At `timeoutMs` or when `signal` aborts, the whole process group gets SIGTERM, then SIGKILL.
 */
export async function runScript(o: {
  script: string; scriptFile: string; cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number;
  signal: AbortSignal; onOutput: (data: Buffer) => void;
  /** Another command that reads the script on its stdin (the docker executor's `docker run -i`). */
  argv?: string[];
  /** Called once when the run is stopped (timeout or abort), e.g. to remove a container. */
  onStop?: () => void;
}): Promise<RunResult> {
  if (!o.argv) {
    await fs.mkdir(path.dirname(o.scriptFile), { recursive: true, mode: 0o700 });
    await fs.writeFile(o.scriptFile, o.script, { mode: 0o700 });
  }
  return new Promise((resolve) => {
    const [cmd, ...args] = o.argv ?? ['bash', '--noprofile', '--norc', o.scriptFile];
    const child = spawn(cmd, args, {
      cwd: o.cwd, env: o.env, detached: true, stdio: [o.argv ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    if (o.argv) {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(o.script);
    }
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | null = null;
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    let stopped = false;
    const stop = () => {
      if (!stopped) o.onStop?.();
      stopped = true;
      killGroup('SIGTERM');
      killTimer ??= setTimeout(() => killGroup('SIGKILL'), 2000);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, Math.max(0, o.timeoutMs));
    const onAbort = () => {
      aborted = true;
      stop();
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    child.stdout!.on('data', (d: Buffer) => o.onOutput(d));
    child.stderr!.on('data', (d: Buffer) => o.onOutput(d));
    child.on('error', (err) => o.onOutput(Buffer.from(`${err.message}\n`)));
    let exitCode: number | null = null;
    child.on('exit', (code) => {
      exitCode = code;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      // Whatever the script left running in its group goes with it (and closes its output).
      killGroup('SIGKILL');
    });
    child.on('close', () => {
      o.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode, timedOut, aborted });
    });
  });
}
