/**
 * KILN_WORKERS > 1: this process becomes the primary of that many server processes sharing one
 * port (node:cluster; the primary accepts connections and hands them out in turn). It serves no
 * request itself. It:
 *
 * - migrates the database and runs first-boot set-up once, before any worker starts, so workers
 *   never race to create root or apply a migration (each worker's own pass then finds nothing
 *   to do);
 * - relays cache invalidations between workers and keeps their rate-limit counters when there is
 *   no Redis (cluster/siblings.ts, cluster/rate-limit-store.ts);
 * - replaces a worker that dies, unless it died before ever listening (a start-up failure such as
 *   a port in use would only repeat: the whole instance stops with it instead);
 * - on SIGTERM or SIGINT asks every worker to stop (each finishes its requests, its background
 *   jobs and closes its database) and exits once all have, killing any still there after
 *   SHUTDOWN_GRACE_MS.
 *
 * Background work runs in every worker: the background job runners claim jobs with atomic
 * leases (workers/) and the CI sweeper's transitions are optimistic (workers/ci-sweeper.ts), so
 * two processes never run the same job or apply the same transition twice.
 */
import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import type { Config } from '../config/schema.ts';
import { isSiblingMessage } from './siblings.ts';
import { isRateRequest, RateCounters } from './rate-limit-store.ts';

const SHUTDOWN_GRACE_MS = 30_000;

export async function runPrimary(config: Config, prepare: () => Promise<void>): Promise<void> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  await prepare();

  const listening = new WeakSet<Worker>();
  let stopping = false;
  let exitCode = 0;

  const stopAll = (code: number, signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    log.info({ signal }, 'stopping the workers');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (workers.length === 0) process.exit(exitCode);
    // Always SIGTERM: on a terminal's Ctrl-C the workers had SIGINT already, and a second signal
    // of a kind they have handled once would end them at once.
    for (const w of workers) w.process.kill('SIGTERM');
    setTimeout(() => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS).unref();
  };

  const rates = config.redisUrl ? null : new RateCounters();
  let announced = false;
  let listeningCount = 0;
  cluster.on('listening', (worker, address) => {
    // Workers listen for git over SSH too (KILN_SSH_PORT): the HTTP port is what says a worker serves.
    if (config.port !== 0 && address.port !== config.port) return;
    listening.add(worker);
    listeningCount += 1;
    // Said once, whatever the log level, like the first boot's lines: the instance serves with
    // all its processes (the bench waits for it before measuring).
    if (!announced && listeningCount >= config.workers) {
      announced = true;
      process.stdout.write(`kiln: ${config.workers} server processes listening on port ${address.port}\n`);
    }
  });
  cluster.on('message', (from, message: unknown) => {
    if (rates && isRateRequest(message)) {
      if (from.isConnected()) from.send(rates.answer(message));
      return;
    }
    if (!isSiblingMessage(message)) return;
    for (const w of Object.values(cluster.workers ?? {})) {
      if (w && w !== from && w.isConnected()) w.send(message);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    if (!listening.has(worker)) {
      log.error({ worker: worker.process.pid, code, signal }, 'a server process failed to start; stopping');
      stopAll(1, 'SIGTERM');
      return;
    }
    log.warn({ worker: worker.process.pid, code, signal }, 'a server process died; starting another');
    cluster.fork();
  });

  process.once('SIGINT', () => stopAll(0, 'SIGINT'));
  process.once('SIGTERM', () => stopAll(0, 'SIGTERM'));
  for (let i = 0; i < config.workers; i++) cluster.fork();
  log.info({ workers: config.workers }, 'started the server processes');
}
