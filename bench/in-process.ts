/**
 * kiln served in this process on a seeded data directory (or PostgreSQL database), with a query log: what one
 * request runs (its statements and their parameters) and what it answers. bench/queries.ts times
 * the statements alone; bench/floor.ts serves them and the answer without kiln around them.
 */
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { openDatabase } from '../src/db/database.ts';
import { bootstrapInstance } from '../src/domain/instance/bootstrap.ts';
import { resolveJobToken } from '../src/domain/jobs/job-token.ts';

export interface Captured {
  status: number;
  body: string;
  /** The statements the request ran, in order; booleans bound as SQLite stores them (0/1) on SQLite. */
  statements: { sql: string; parameters: unknown[] }[];
}

export type InProcessKiln = Awaited<ReturnType<typeof inProcessKiln>>;

/** `databaseUrl`: PostgreSQL's, or null for the data directory's SQLite file. */
export async function inProcessKiln(dataDir: string, databaseUrl: string | null = null) {
  const config = loadConfig({ ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), KILN_DATA_DIR: dataDir, KILN_EXTERNAL_URL: 'http://kiln.bench', KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'silent' });
  let log: Captured['statements'] | null = null;
  const database = openDatabase({
    ...config,
    queryLog: (sql, parameters) => log?.push({
      sql,
      parameters: databaseUrl ? [...parameters] : parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p)),
    }),
  });
  const boot = await bootstrapInstance(database.db, { rootPassword: null, rootToken: null, dialect: database.dialect });
  const app = await buildApp(config, {
    database, secretKeyBase: boot.secretKeyBase, version: { version: '15.2.0', revision: 'bench' },
    jobTokens: resolveJobToken, cluster: null, logger: false,
  });
  await app.ready();
  return {
    app,
    /** One request with its statements logged (send it once before, so that what a warm server remembers is not among them). */
    async capture(url: string, headers: Record<string, string>): Promise<Captured> {
      const statements: Captured['statements'] = [];
      log = statements;
      try {
        const res = await app.inject({ url, headers });
        return { status: res.statusCode, body: res.body, statements };
      } finally {
        log = null;
      }
    },
    async close(): Promise<void> {
      await app.close();
      await database.close();
    },
  };
}
