/**
 * What the bench scripts share to measure a server from outside: starting a helper process, the
 * CPU time and resident memory /proc reports for a process and its children, and autocannon runs
 * of one endpoint with the server CPU each request cost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import autocannon from 'autocannon';

export interface Target {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** A different path on every request (its argument counts requests), instead of `path` each time. */
  paths?: (n: number) => string;
}

export function startProcess(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}



const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** The fields of /proc/<pid>/stat after the parenthesised command name (Linux only). */
async function statFields(pid: number): Promise<string[] | null> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** `pid` and its children (KILN_WORKERS' server processes). */
async function processTree(pid: number): Promise<number[]> {
  const pids = [pid];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await statFields(Number(entry));
    // The 4th field is the parent's pid.
    if (fields && Number(fields[1]) === pid) pids.push(Number(entry));
  }
  return pids;
}

/** CPU time a process and its children have used so far in user space and in the kernel, in µs, from /proc. */
export async function cpuTimes(pid: number): Promise<{ user: number; sys: number }> {
  let user = 0;
  let sys = 0;
  for (const p of await processTree(pid)) {
    const fields = await statFields(p);
    // utime and stime are the 14th and 15th fields.
    if (fields) {
      user += Number(fields[11]);
      sys += Number(fields[12]);
    }
  }
  return { user: (user / TICKS_PER_SECOND) * 1e6, sys: (sys / TICKS_PER_SECOND) * 1e6 };
}

/** CPU time (user + system) a process and its children have used so far, in µs, from /proc. */
export async function cpuMicros(pid: number): Promise<number> {
  const { user, sys } = await cpuTimes(pid);
  return user + sys;
}

/** Resident memory of a process and its children, in MB, from /proc/<pid>/status. */
export async function rssMegabytes(pid: number): Promise<number> {
  let kb = 0;
  for (const p of await processTree(pid)) {
    const status = await fs.readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return kb / 1024;
}

export interface Server {
  base: string;
  pid: number;
}

export interface Measured {
  rps: number;
  p99: number;
  non2xx: number;
  /** The server's CPU time per answered request, µs. */
  cpu: number;
  /** The part of `cpu` spent in the kernel (the socket, and waking the load generator). */
  sys: number;
}

/** Runs of one endpoint on one server; a rotating target's paths go on from run to run. */
export function runner(
  server: Server, t: Target, opts: { duration: number; connections: number },
): { warmUp(): Promise<void>; measure(): Promise<Measured> } {
  let n = 0;
  const paths = t.paths;
  const requests = paths ? [{ setupRequest: (req: object) => ({ ...req, path: paths(n++) }) }] : undefined;
  const options = { url: server.base + t.path, headers: t.headers, connections: opts.connections, requests };
  return {
    // Lets the JIT and the caches settle before the measured runs.
    warmUp: async () => {
      await autocannon({ ...options, duration: 1 });
    },
    measure: async () => {
      const before = await cpuTimes(server.pid);
      const r = await autocannon({ ...options, duration: opts.duration });
      const after = await cpuTimes(server.pid);
      const per = (us: number) => us / r.requests.total;
      return {
        rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx,
        cpu: per(after.user + after.sys - before.user - before.sys), sys: per(after.sys - before.sys),
      };
    },
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
