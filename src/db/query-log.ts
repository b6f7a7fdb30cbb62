/**
 * An optional observer of every statement a database handle runs, with its parameters: the SQL
 * Kysely sends (through its `log` option) and the compiled reads db/prepared.ts runs directly on
 * the connection. Used by tests that read the query plans of every list (test/api/query-plans);
 * nothing observes in production, so the cost there is one WeakMap lookup per prepared read.
 */
import type { Kysely } from 'kysely';
import type { DB } from './types.ts';

export type QueryLog = (sql: string, parameters: readonly unknown[]) => void;

const logs = new WeakMap<Kysely<DB>, QueryLog>();

export function registerQueryLog(db: Kysely<DB>, log: QueryLog): void {
  logs.set(db, log);
}

export function queryLogOf(db: Kysely<DB>): QueryLog | undefined {
  return logs.get(db);
}
