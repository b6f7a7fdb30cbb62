/**
 * The system `git` for output that is file content (bytes, not text) or may be large: stdout is
 * kept as Buffers and bounded by `maxBytes` (the child is ended past it, and the caller learns
 * that the output was too large instead of kiln holding it all in memory).
 */
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { GitCommandError, gitEnv, type GitOptions } from './git-command.ts';

export class GitOutputTooLarge extends Error {}
export class GitTimedOut extends Error {}

export interface BoundedOutput {
  /** Most bytes of stdout kept; past it the child is ended. */
  maxBytes: number;
  /**
   * Past `maxBytes` or `timeoutMs`, answer with what was read (and `truncated`) instead of
   * failing: for searches, whose first results are worth answering (the caller drops a cut last
   * record).
   */
  truncate?: boolean;
  /** Ends the child after this long; without `truncate` that fails with GitTimedOut. */
  timeoutMs?: number;
}

export function runGitBytes(
  args: string[], o: GitOptions & BoundedOutput,
): Promise<{ stdout: Buffer; exitCode: number; truncated?: boolean }> {
  const full = o.gitDir ? ['--git-dir', o.gitDir, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn('git', full, { env: gitEnv(o.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    let timedOut = false;
    const timer = o.timeoutMs === undefined ? null : setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      if (tooLarge) return;
      size += b.length;
      if (size > o.maxBytes) {
        tooLarge = true;
        if (o.truncate) out.push(b.subarray(0, b.length - (size - o.maxBytes)));
        child.kill('SIGKILL');
        return;
      }
      out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => { if (err.length < 64) err.push(b); });
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      if ((tooLarge || timedOut) && o.truncate) return resolve({ stdout: Buffer.concat(out), exitCode: 0, truncated: true });
      if (tooLarge) return reject(new GitOutputTooLarge(`git ${args[0]} wrote more than ${o.maxBytes} bytes`));
      if (timedOut) return reject(new GitTimedOut(`git ${args[0]} ran longer than ${o.timeoutMs} ms`));
      const exitCode = code ?? -1;
      if (exitCode === 0 || o.okExitCodes?.includes(exitCode)) resolve({ stdout: Buffer.concat(out), exitCode });
      else reject(new GitCommandError(full, code, Buffer.concat(err).toString('utf8')));
    });
    child.stdin.on('error', () => { /* the exit code reports what went wrong */ });
    child.stdin.end(o.input ?? '');
  });
}

/**
 * A blob's content as a stream (`git cat-file blob`), with its first `peekBytes` read ahead so
 * the caller can decide how to present it (text or binary) before the body starts. The child
 * ends with the stream; `abort()` ends it early (the client went away).
 */
export async function streamBlob(
  gitDir: string, blobId: string, peekBytes: number,
): Promise<{ head: Buffer; body: Readable; abort(): void }> {
  const child = spawn('git', ['--git-dir', gitDir, 'cat-file', 'blob', blobId], { env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  const chunks = child.stdout[Symbol.asyncIterator]();
  const first: Buffer[] = [];
  let size = 0;
  while (size < peekBytes) {
    const next = await chunks.next();
    if (next.done) break;
    first.push(next.value as Buffer);
    size += (next.value as Buffer).length;
  }
  const head = Buffer.concat(first);
  async function* all() {
    yield head;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield next.value as Buffer;
    }
  }
  return { head, body: Readable.from(all(), { objectMode: false }), abort: () => child.kill('SIGKILL') };
}

/**
 * `git` whose NUL-terminated output records (`-z`) the caller reads as they arrive: `onRecord`
 * answers false once it has what it needs, which ends the child there (a history walk that met
 * every path it looked for reads no further). A record without its NUL when the child ended
 * (killed past `maxBytes` or `timeoutMs`) is not handed over. `stopped` says the caller ended
 * it, `truncated` that a bound did; neither means the output ended.
 */
export function scanGitRecords(
  args: string[], o: GitOptions & BoundedOutput & { timeoutMs: number },
  onRecord: (record: string) => boolean,
): Promise<{ stopped: boolean; truncated: boolean }> {
  const full = o.gitDir ? ['--git-dir', o.gitDir, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn('git', full, { env: gitEnv(o.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const err: Buffer[] = [];
    let pending: Buffer = Buffer.alloc(0);
    let size = 0;
    let stopped = false;
    let truncated = false;
    const end = (why: 'stopped' | 'truncated') => {
      if (stopped || truncated) return;
      if (why === 'stopped') stopped = true;
      else truncated = true;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => end('truncated'), Math.max(0, o.timeoutMs));
    child.stdout.on('data', (b: Buffer) => {
      if (stopped || truncated) return;
      size += b.length;
      if (size > o.maxBytes) return end('truncated');
      let chunk = pending.length > 0 ? Buffer.concat([pending, b]) : b;
      for (let nul = chunk.indexOf(0); nul >= 0; nul = chunk.indexOf(0)) {
        if (!onRecord(chunk.subarray(0, nul).toString('utf8'))) return end('stopped');
        chunk = chunk.subarray(nul + 1);
      }
      pending = Buffer.from(chunk);
    });
    child.stderr.on('data', (b: Buffer) => { if (err.length < 64) err.push(b); });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (stopped || truncated) return resolve({ stopped, truncated });
      if (code !== 0) return reject(new GitCommandError(full, code, Buffer.concat(err).toString('utf8')));
      // Output ends with its last record's NUL; anything after it is a record too.
      if (pending.length > 0) onRecord(pending.toString('utf8'));
      resolve({ stopped: false, truncated: false });
    });
  });
}
