/**
 * The file work of a move, each step a child process (DESIGN, Performance shape: git and other
 * blocking work never runs on the event loop), each stoppable through an AbortSignal:
 *
 * - copy: `cp -a` of the whole bare repository (objects, packs, refs, HEAD, config, hooks), into a
 *   temporary directory on the destination shard, so the final path only ever holds a complete,
 *   verified copy (it appears there by one rename);
 * - verify: every ref and HEAD identical in source and copy (`git for-each-ref`), and
 *   `git fsck --connectivity-only` on the copy: every object reachable from every ref is present
 *   and parses. (A full fsck re-hashes every blob, several times slower than the copy itself,
 *   and guards against a corruption a byte-for-byte copy of verified packs does not introduce.)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { gitEnv } from '../repositories/git-command.ts';

export class CommandFailed extends Error {}

function run(command: string, args: string[], o: { signal?: AbortSignal; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? gitEnv(), signal: o.signal, killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(o.signal?.aborted ? o.signal.reason : e));
    child.on('close', (code) => {
      if (o.signal?.aborted) return reject(o.signal.reason);
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      const stderr = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' ');
      // `git --git-dir <dir> <subcommand>`: name the subcommand.
      const label = command === 'git' ? `git ${args[2]}` : command;
      reject(new CommandFailed(`${label} failed (exit ${code}): ${stderr}`));
    });
  });
}

/** Copies the bare repository at `from` to the new directory `to` (which must not exist). */
export async function copyRepository(from: string, to: string, signal?: AbortSignal): Promise<void> {
  await run('cp', ['-a', '--', from, to], { signal, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' } });
}

/**
 * `<objectname> <refname>` of every ref, sorted, and what HEAD says. HEAD of a bare repository
 * is a small file (`ref: refs/heads/main`, or an object id when detached): read, not spawned for.
 */
export async function refSnapshot(gitDir: string, signal?: AbortSignal): Promise<string> {
  const [refs, head] = await Promise.all([
    run('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(objectname) %(refname)'], { signal }),
    fs.readFile(`${gitDir}/HEAD`, 'utf8'),
  ]);
  return `HEAD ${head.trim()}\n${refs}`;
}

/** Every object reachable from every ref is present and well-formed. */
export async function checkConnectivity(gitDir: string, signal?: AbortSignal): Promise<void> {
  await run('git', ['--git-dir', gitDir, 'fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { signal });
}

/** Deletes a directory tree (fs.rm works on libuv's thread pool, off the event loop). */
export async function removeTree(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Sleeps `ms`, waking early (rejecting) when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
