/**
 * kiln's command line: `serve` (default), `migrate`, `doctor`, `backup` or `runner`.
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest, MigrationChecksumError } from './db/migrate.ts';
import cluster from 'node:cluster';
import module from 'node:module';

// Boot time (issue 17, item 5): V8 keeps the code it compiled for the server's modules on disk
// (under the system's temporary directory) and the next start reuses it instead of compiling
// again, which halves the time to load them. Only modules imported after this line benefit, so
// `serve` imports the server when it runs.
module.enableCompileCache?.();

const USAGE = `usage: kiln [serve | migrate | doctor | backup | runner]
  serve    migrate the database, create root on first boot, serve HTTP (default)
  migrate  apply pending database migrations and exit
  doctor   check configuration, database and schema, git, storages, Redis and the SSH port; change nothing
  backup   back up a serving instance or restore one (kiln backup --help)
  runner   run CI jobs against a kiln (kiln runner --help)
Configuration comes from the environment; see the README.`;

async function main(): Promise<void> {
  // `kiln runner …` is a client of the server (src/runner/): its own options, no server configuration.
  if (process.argv[2] === 'runner') {
    process.exitCode = await (await import('./runner/cli.ts')).runnerMain(process.argv.slice(3));
    return;
  }
  if (process.argv[2] === 'backup') {
    const { backupMain } = await import('./backup/cli.ts');
    process.exitCode = await backupMain(process.argv.slice(3), () => loadConfig());
    return;
  }
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  const command = positionals[0] ?? 'serve';
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      // KILN_WORKERS > 1: this process starts and watches the server processes (cluster/workers.ts).
      if (config.workers > 1 && cluster.isPrimary) {
        const { runPrimary } = await import('./cluster/workers.ts');
        const { prepareInstance } = await import('./prepare.ts');
        return runPrimary(config, () => prepareInstance(config));
      }
      const { startServer } = await import('./server.ts');
      const running = await startServer(config);
      // Written now rather than at exit, which a killed process never reaches.
      module.flushCompileCache?.();
      const stop = (signal: string) => {
        running.app.log.info({ signal }, 'shutting down');
        void running.close().then(() => process.exit(0));
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      return;
    }
    case 'migrate': {
      const database = openDatabase(config);
      const result = await migrateToLatest(database.db);
      for (const r of result.results ?? []) console.log(`${r.status}: ${r.migrationName}`);
      await database.close();
      return;
    }
    case 'doctor': {
      const { diagnose, report } = await import('./doctor.ts');
      const { text, exitCode } = report(await diagnose(config));
      console.log(text);
      process.exitCode = exitCode;
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof MigrationChecksumError) {
    console.error(err.message);
  } else {
    console.error(err);
  }
  process.exit(1);
});
