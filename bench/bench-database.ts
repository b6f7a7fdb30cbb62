/**
 * The database of one bench run: with BENCH_DATABASE_URL=postgres://…, a fresh database next to
 * the one it names, dropped afterwards; without it, null (the bench's kiln uses its SQLite file).
 */
import crypto from 'node:crypto';
import pg from 'pg';

export interface BenchDatabase {
  /** The fresh database's URL, or null for SQLite. */
  url: string | null;
  /** Drops it (force-closing what is still connected); null for SQLite. */
  drop: (() => Promise<void>) | null;
}

export async function benchDatabase(): Promise<BenchDatabase> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) return { url: null, drop: null };
  const name = `kiln_bench_${crypto.randomBytes(4).toString('hex')}`;
  const run = async (statement: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await run(`create database ${name}`);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
