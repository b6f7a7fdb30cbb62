/**
 * kiln's command line: `serve` (default) or `migrate`.
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { startServer } from './server.ts';

const USAGE = `usage: kiln [serve | migrate]
  serve    migrate the database, create root on first boot, serve HTTP (default)
  migrate  apply pending database migrations and exit
Configuration comes from the environment; see the README.`;

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  const command = positionals[0] ?? 'serve';
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const running = await startServer(config);
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
    default:
      console.error(USAGE);
      process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(err);
  }
  process.exit(1);
});
