/**
 * `kiln serve` as the bench scripts start it: on a free port of 127.0.0.1, rate limits off,
 * warnings only, on `dataDir` (and `databaseUrl` when given), answering once /-/readiness does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface KilnProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  base: string;
  /** SIGTERM, resolved when the process has exited. */
  stop(): Promise<void>;
}

/** `root`: the checkout whose src/main.ts runs (default: this one; bench/compare.ts passes another). */
export async function startKiln(
  opts: {
    dataDir: string; databaseUrl: string | null; nodeFlags?: string[]; env?: Record<string, string>; root?: string;
    /** How long boot may take (default 30 s; a busy machine boots slower). */
    readyTimeoutMs?: number;
  },
): Promise<KilnProcess> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [
    ...(opts.nodeFlags ?? []), path.join(opts.root ?? path.join(import.meta.dirname, '..'), 'src', 'main.ts'),
    'serve',
  ], {
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', KILN_DATA_DIR: opts.dataDir, LOG_LEVEL: 'warn', KILN_SSH_PORT: '0',
      KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', KILN_EXTERNAL_URL: base,
      ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}), ...opts.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (await fetch(`${base}/-/readiness`).then((r) => r.ok, () => false)) break;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`kiln exited (${child.exitCode ?? child.signalCode}) before answering /-/readiness`);
    }
    if (Date.now() > until) {
      // Not left running behind the caller, who gets no handle to stop it.
      child.kill('SIGKILL');
      throw new Error(`kiln did not answer /-/readiness within ${Math.round((opts.readyTimeoutMs ?? 30_000) / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child, base,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
