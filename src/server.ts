/**
 * The only file that listens: opens the database, migrates, runs first-boot set-up, builds the
 * app and serves until SIGINT/SIGTERM, then closes connections gracefully.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from './config/schema.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { bootstrapInstance } from './domain/instance/bootstrap.ts';
import { buildApp } from './app.ts';
import { joinCluster, type Cluster } from './cluster/cluster.ts';
import nodeCluster from 'node:cluster';
import { joinSiblings } from './cluster/siblings.ts';
import { SERVICE_VERSION, currentRevision } from './version.ts';
import { resolveJobToken } from './domain/jobs/job-token.ts';
import { announceFirstBoot } from './prepare.ts';
import { ciEnvFrom } from './domain/pipelines/ci-env.ts';
import { CiSweeper } from './workers/ci-sweeper.ts';
import { WebHookLogsPruner } from './workers/web-hook-logs-pruner.ts';
import { PipelineScheduler } from './workers/pipeline-schedules.worker.ts';
import { startSshServer } from './git/ssh-server.ts';

export interface Running {
  app: FastifyInstance;
  database: Database;
  close(): Promise<void>;
}

/**
 * Boot allocates far more than it keeps (types stripped from ~430 modules, routes and statements
 * built, the database migrated and checked): V8 grows the young generation to its maximum for it
 * and keeps those pages afterwards. One memory-reducing collection before serving gives them back
 * (issue 17, item 5; README, Performance); under load the young generation grows again as far as
 * `--max-semi-space-size` lets it. `gc` exists when Node runs with `--expose-gc`, as `npm start`
 * runs it; without the flag boot simply keeps its pages.
 */
function releaseBootMemory(): void {
  globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** How long shutdown waits for running handlers before closing the database anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

export async function startServer(config: Config): Promise<Running> {
  const database = openDatabase(config);
  await migrateToLatest(database.db);
  const boot = await bootstrapInstance(database.db, {
    rootPassword: config.rootPassword, rootToken: config.rootToken, dialect: database.dialect,
  });

  let cluster: Cluster | null = null;
  // Publishing can fail only once the app (and its logger) exists: writes come from requests.
  let reportPublishError = (err: unknown): void => console.error(err);
  if (config.redisUrl) {
    cluster = await joinCluster({
      redisUrl: config.redisUrl, secretKeyBase: boot.secretKeyBase, writes: database.writes, onError: (err) => reportPublishError(err),
    });
  } else if (nodeCluster.isWorker) {
    // One of KILN_WORKERS' processes without Redis: the others are told through the primary.
    cluster = joinSiblings({ writes: database.writes, onError: (err) => reportPublishError(err) });
  }

  const app = await buildApp(config, {
    database, secretKeyBase: boot.secretKeyBase, cluster, jobTokens: resolveJobToken,
    version: { version: SERVICE_VERSION, revision: currentRevision() },
  });
  reportPublishError = (err) => app.log.warn({ err }, 'could not tell the other processes of this instance about a change');
  await announceFirstBoot(database, config, boot.generatedRootPassword);
  await app.ready();
  releaseBootMemory();
  await app.listen({ port: config.port, host: config.host });
  // Git over SSH beside HTTP; with KILN_WORKERS each process listens and node:cluster shares the port.
  const ssh = config.sshPort > 0
    ? await startSshServer({ db: database.db, config }, app.log, { port: config.sshPort, host: config.host })
    : null;
  await app.workers.start();
  const ciSweeper = new CiSweeper(ciEnvFrom(database.db, config), config.ciSweepInterval, app.log);
  ciSweeper.start();
  const scheduler = new PipelineScheduler(database.db, app.jobs, config.pipelineScheduleInterval, app.log);
  scheduler.start();
  const hookLogsPruner = new WebHookLogsPruner(database.db, app.log);
  hookLogsPruner.start();

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await ciSweeper.stop();
      await scheduler.stop();
      await hookLogsPruner.stop();
      await ssh?.close();
      await app.close();
      // Handlers whose clients went away are still running: their queries finish first.
      await app.runningHandlers.settled(SHUTDOWN_GRACE_MS);
      await database.close();
      await cluster?.close();
    })();
    return closing;
  };
  return { app, database, close };
}
