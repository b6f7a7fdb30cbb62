/**
 * Work that must wait until what a handle wrote is committed: telling the rest of the process
 * (and, through it, the other processes) to forget what it remembered of the rows written, as
 * domain/auth/credential-events.ts does. Run any earlier and a concurrent request could read
 * the old row again, before the commit, and remember it anew; run for a transaction that then
 * rolls back and it would announce a change that never happened.
 *
 * Outside a transaction each statement commits on its own, so the work runs at once. Inside one
 * it is kept with the transaction's connection and run by the driver (database.ts) once the
 * commit succeeded, or dropped when the transaction ends otherwise. Any transaction of a handle
 * from openDatabase works, whoever opened it: a domain function that writes within its caller's
 * transaction announces there, and its announcement waits for the caller's commit.
 */
import type { DatabaseConnection, Kysely, Transaction } from 'kysely';
import type { DB } from './types.ts';

/** Told the handle the transaction belonged to (the application's own, never a transaction). */
export type CommitWork = (root: Kysely<DB>) => void;

interface OpenTransaction {
  root: Kysely<DB>;
  work: CommitWork[];
}

/** The open transaction on each connection of every handle (a connection runs one at a time). */
const open = new WeakMap<DatabaseConnection, OpenTransaction>();

/** database.ts: a transaction of `root` began on `connection`. */
export function transactionBegan(connection: DatabaseConnection, root: Kysely<DB>): void {
  open.set(connection, { root, work: [] });
}

/** database.ts: the transaction on `connection` committed (`true`) or ended without committing. */
export function transactionEnded(connection: DatabaseConnection, committed: boolean): void {
  const t = open.get(connection);
  open.delete(connection);
  if (committed && t) for (const work of t.work) run(work, t.root);
}

/**
 * Runs `work` once what `db` wrote is committed: now for a handle outside a transaction, after
 * the commit for a transaction (never, if it rolls back).
 */
export async function afterCommit(db: Kysely<DB> | Transaction<DB>, work: CommitWork): Promise<void> {
  if (!db.isTransaction) {
    run(work, db);
    return;
  }
  // The transaction's executor provides its one connection, after any statement still running on it.
  await db.getExecutor().provideConnection(async (connection) => {
    const t = open.get(connection);
    // Only transactions begun through openDatabase's driver are tracked; work for another would be lost.
    if (!t) throw new Error('afterCommit: the transaction was not begun by a handle of openDatabase');
    t.work.push(work);
  });
}

/**
 * The write is committed whatever the work does: a failure of it must not turn the request that
 * wrote into an error (nor, inside the driver's commit, into a rollback attempt), so it is reported.
 */
function run(work: CommitWork, root: Kysely<DB>): void {
  try {
    work(root);
  } catch (err) {
    process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'AfterCommitWarning');
  }
}
