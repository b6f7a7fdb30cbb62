/**
 * Runs `git http-backend` (the CGI program that implements git's smart HTTP protocol) for one
 * request: the request body streams into its stdin, its CGI headers become the response status
 * and headers, and the rest of its stdout streams back to the client. Nothing is buffered
 * whole and nothing blocks the event loop. Gzip request bodies pass through: http-backend
 * inflates them itself when told the Content-Encoding.
 *
 * The backend runs in a process group of its own with everything it starts (receive-pack,
 * upload-pack, hooks), and ending a request ends the whole group: when the client goes away,
 * or when the request outlives its time limit. The backend counts as finished only once it has
 * exited and every process holding its output has closed it (receive-pack writes to it
 * directly): then the repository is no longer being written. `finish` runs at that moment,
 * before the response ends, so a client that sees its push answered sees what came after it.
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { gitEnv } from '../domain/repositories/git-command.ts';
import { HOOKS_DIR, pushHookEnv } from './push-session.ts';

export interface BackendRequest {
  /** The shard root (GIT_PROJECT_ROOT). */
  projectRoot: string;
  /** `/<disk path>/info/refs` etc., relative to the root. */
  pathInfo: string;
  method: string;
  queryString: string;
  raw: IncomingMessage;
  body: Readable | null;
  remoteUser: string;
  /** End the backend (and the response) after this many milliseconds; no limit when absent. */
  timeLimitMs?: number;
  /**
   * A push's pre-receive check (hooks/pre-receive.ts): the file that says who pushes and what
   * protects the project. Without it no hook runs (reads, wikis, snippets).
   */
  pushAccessFile?: string;
  /** Runs once the backend has finished (see above), before the response ends; must not throw. */
  finish?: (exitCode: number, stderr: string) => Promise<void>;
}

/**
 * Streams the backend's answer into `res`; resolves with its exit code (and error output) once it has finished
 * and the response has ended.
 */

export function runHttpBackend(req: BackendRequest, res: ServerResponse): Promise<{ exitCode: number; stderr: string }> {
  const headers = req.raw.headers;
  const env = gitEnv({
    GIT_PROJECT_ROOT: req.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: req.pathInfo,
    REQUEST_METHOD: req.method,
    QUERY_STRING: req.queryString,
    REMOTE_USER: req.remoteUser,
    REMOTE_ADDR: req.raw.socket.remoteAddress ?? '',
    CONTENT_TYPE: String(headers['content-type'] ?? ''),
    ...(headers['content-length'] && !headers['transfer-encoding'] ? { CONTENT_LENGTH: String(headers['content-length']) } : {}),
    ...(headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(headers['content-encoding']) } : {}),
    ...(headers['git-protocol'] ? { HTTP_GIT_PROTOCOL: String(headers['git-protocol']) } : {}),
    // Pushes are authorised by kiln before the backend runs; let receive-pack serve them.
    GIT_CONFIG_COUNT: req.pushAccessFile ? '3' : '2',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'true',
    // Clients may send push options (`git push -o ci.skip`), read by kiln as the request streams.
    GIT_CONFIG_KEY_1: 'receive.advertisePushOptions',
    GIT_CONFIG_VALUE_1: 'true',
    // Each ref change is checked against the project's protected branches and tags.
    ...(req.pushAccessFile ? {
      GIT_CONFIG_KEY_2: 'core.hooksPath', GIT_CONFIG_VALUE_2: HOOKS_DIR, ...pushHookEnv(req.pushAccessFile),
    } : {}),
  });

  return new Promise((resolve) => {
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const endGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch { /* the group has exited already */ }
    };
    let headerBuf = Buffer.alloc(0);
    let headersDone = false;
    let stderr = '';
    const limit = req.timeLimitMs === undefined ? null : setTimeout(() => {
      stderr += `\nended after the time limit of ${req.timeLimitMs} ms`;
      endGroup();
    }, req.timeLimitMs);

    const fail = (status: number, text: string) => {
      if (!res.headersSent) {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(text);
      } else {
        res.destroy();
      }
    };

    child.stderr.on('data', (b: Buffer) => { stderr += b.toString('utf8').slice(0, 4096); });
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        if (!res.write(chunk)) {
          child.stdout.pause();
          res.once('drain', () => child.stdout.resume());
        }
        return;
      }
      headerBuf = Buffer.concat([headerBuf, chunk]);
      const crlf = headerBuf.indexOf('\r\n\r\n');
      const lf = headerBuf.indexOf('\n\n');
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
      if (end < 0) return;
      const sepLength = end === crlf ? 4 : 2;
      const out: Record<string, string> = {};
      let status = 200;
      for (const line of headerBuf.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
        else out[name] = value;
      }
      headersDone = true;
      res.writeHead(status, out);
      const rest = headerBuf.subarray(end + sepLength);
      if (rest.length > 0) res.write(rest);
    });
    child.stdout.on('end', () => {
      if (!headersDone) fail(500, 'The git backend did not answer.\n');
    });
    child.on('error', () => fail(500, 'The git backend could not be started.\n'));
    child.on('close', (code) => {
      if (limit) clearTimeout(limit);
      const exitCode = code ?? -1;
      void (req.finish?.(exitCode, stderr) ?? Promise.resolve()).catch(() => undefined).finally(() => {
        if (headersDone) res.end();
        resolve({ exitCode, stderr });
      });
    });
    // A client that goes away mid-transfer takes the backend, and what it started, with it.
    res.on('close', () => { if (child.exitCode === null) endGroup(); });
    child.stdin.on('error', () => { /* the backend exited early; its answer says why */ });
    if (req.body) req.body.pipe(child.stdin);
    else child.stdin.end();
  });
}
