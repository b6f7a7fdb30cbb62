/**
 * Every Kysely call of the job queue. A claim is atomic on both engines (DESIGN, Stack: background
 * work): PostgreSQL locks one due row with `FOR UPDATE SKIP LOCKED` inside a transaction, so
 * concurrent workers on any number of nodes skip each other's rows instead of waiting; SQLite has
 * one writer, and a single `UPDATE … WHERE id = (SELECT … LIMIT 1) … RETURNING *` both picks and
 * takes the row.
 *
 * A row is due when it is `queued` with `run_at` passed, or `running` with an expired lease: its
 * worker crashed or stalled, and taking it over is the crash recovery.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Dialect } from '../../db/database.ts';
import type { BackgroundJobRow } from '../../db/tables/background-jobs.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface NewJob {
  kind: string;
  payload: unknown;
  runAt?: Date;
  maxAttempts?: number;
}

export async function insertJob(db: Db, job: NewJob): Promise<BackgroundJobRow> {
  const now = nowIso();
  return db.insertInto('background_jobs').values({
    kind: job.kind, payload: JSON.stringify(job.payload ?? null), run_at: nowIso(job.runAt), created_at: now, updated_at: now,
    ...(job.maxAttempts ? { max_attempts: job.maxAttempts } : {}),
  }).returningAll().executeTakeFirstOrThrow();
}

function due(eb: ExpressionBuilder<DB, 'background_jobs'>, now: string, kinds: string[]): Expression<SqlBool> {
  return eb.and([
    eb('kind', 'in', kinds),
    eb.or([
      eb.and([eb('state', '=', 'queued'), eb('run_at', '<=', now)]),
      eb.and([eb('state', '=', 'running'), eb('lease_expires_at', '<', now)]),
    ]),
  ]);
}

/** Takes one due job of `kinds` for `owner` until `leaseMs` from now, counting the attempt. */
export async function claimJob(
  db: Kysely<DB>, dialect: Dialect, o: { owner: string; leaseMs: number; kinds: string[] },
): Promise<BackgroundJobRow | null> {
  if (o.kinds.length === 0) return null;
  const now = new Date();
  const set = (eb: ExpressionBuilder<DB, 'background_jobs'>) => ({
    state: 'running' as const,
    lease_owner: o.owner,
    lease_expires_at: nowIso(new Date(now.getTime() + o.leaseMs)),
    attempts: eb('attempts', '+', 1),
    updated_at: nowIso(now),
  });
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('background_jobs').select('id').where((eb) => due(eb, nowIso(now), o.kinds))
        .orderBy('run_at').orderBy('id').limit(1).forUpdate().skipLocked().executeTakeFirst();
      if (!row) return null;
      return (await trx.updateTable('background_jobs').set(set).where('id', '=', row.id).returningAll().executeTakeFirst()) ?? null;
    });
  }
  const pick = db.selectFrom('background_jobs').select('id').where((eb) => due(eb, nowIso(now), o.kinds))
    .orderBy('run_at').orderBy('id').limit(1);
  // Most polls find nothing: ask with a read first, so that an idle queue writes nothing (a write
  // would drop every row remembered until the next write, db/read-cache.ts).
  if (!(await pick.executeTakeFirst())) return null;
  // The outer condition repeats the inner one: the row must still be due when it is taken.
  const row = await db.updateTable('background_jobs').set(set)
    .where('id', '=', pick).where((eb) => due(eb, nowIso(now), o.kinds))
    .returningAll().executeTakeFirst();
  return row ?? null;
}

/** Extends a lease still held by `owner`; false when it was lost (expired and taken over). */
export async function extendLease(db: Db, id: number, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db.updateTable('background_jobs')
    .set({ lease_expires_at: nowIso(new Date(Date.now() + leaseMs)), updated_at: nowIso() })
    .where('id', '=', id).where('state', '=', 'running').where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A finished job leaves the table; the records it worked on keep the history. */
export async function deleteFinishedJob(db: Db, id: number, owner: string): Promise<void> {
  await db.deleteFrom('background_jobs').where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Back to the queue at `runAt` after a failed attempt. */
export async function requeueJob(db: Db, id: number, owner: string, runAt: Date, error: string): Promise<void> {
  await db.updateTable('background_jobs')
    .set({ state: 'queued', run_at: nowIso(runAt), lease_owner: null, lease_expires_at: null, last_error: error, updated_at: nowIso() })
    .where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Out of attempts: kept as `dead` with its last error for an operator to read. */
export async function buryJob(db: Db, id: number, owner: string, error: string): Promise<void> {
  await db.updateTable('background_jobs')
    .set({ state: 'dead', lease_owner: null, lease_expires_at: null, last_error: error, updated_at: nowIso() })
    .where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Queued or running jobs of `kind` (tests and diagnostics). */
export async function countLiveJobs(db: Db, kind?: string): Promise<number> {
  let qb = db.selectFrom('background_jobs').select(sql<number>`count(*)`.as('n')).where('state', 'in', ['queued', 'running']);
  if (kind) qb = qb.where('kind', '=', kind);
  return Number((await qb.executeTakeFirstOrThrow()).n);
}

/** Handed back by a stopping worker: due again now, and the interrupted run does not count. */
export async function releaseJob(db: Db, id: number, owner: string): Promise<void> {
  await db.updateTable('background_jobs')
    .set(
      (eb) => ({
        state: 'queued' as const, run_at: nowIso(), lease_owner: null, lease_expires_at: null,
        attempts: eb('attempts', '-', 1), updated_at: nowIso(),
      }),
    )
    .where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Adds one to each of the named running totals (Sidekiq's processed / failed counters). */
export async function countJobRuns(db: Db, names: ('processed' | 'failed')[]): Promise<void> {
  for (const name of names) {
    await db.insertInto('background_job_counters').values({ name, value: 1 })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('background_job_counters.value', '+', 1) })))
      .execute();
  }
}

export async function jobRunCounters(db: Db): Promise<{ processed: number; failed: number }> {
  const rows = await db.selectFrom('background_job_counters').selectAll().execute();
  const of = (name: string) => Number(rows.find((r) => r.name === name)?.value ?? 0);
  return { processed: of('processed'), failed: of('failed') };
}

/** A worker process announces itself, or renews its heartbeat. */
export async function beatWorker(db: Db, w: { owner: string; hostname: string; pid: number; concurrency: number; startedAt: string }) {
  const now = nowIso();
  await db.insertInto('background_job_workers').values({
    owner: w.owner, hostname: w.hostname, pid: w.pid, concurrency: w.concurrency, started_at: w.startedAt, beat_at: now,
  }).onConflict((oc) => oc.column('owner').doUpdateSet({ beat_at: now })).execute();
}

/** A stopping worker leaves; rows whose heartbeat is older than `staleBefore` are gone processes. */
export async function removeWorkers(db: Db, f: { owner?: string; staleBefore?: string }): Promise<void> {
  if (f.owner !== undefined) await db.deleteFrom('background_job_workers').where('owner', '=', f.owner).execute();
  if (f.staleBefore !== undefined) await db.deleteFrom('background_job_workers').where('beat_at', '<', f.staleBefore).execute();
}

/** The worker processes seen since `aliveAfter`, each with its running jobs counted. */
export async function liveWorkers(db: Db, aliveAfter: string) {
  return db.selectFrom('background_job_workers')
    .select(['owner', 'hostname', 'pid', 'concurrency', 'started_at'])
    .select((eb) => eb.selectFrom('background_jobs').select(sql<number>`count(*)`.as('n'))
      .where('background_jobs.state', '=', 'running')
      .whereRef('background_jobs.lease_owner', '=', 'background_job_workers.owner').as('busy'))
    .where('beat_at', '>=', aliveAfter).orderBy('started_at').execute();
}

/** Sidekiq's queue size and latency (the oldest due job's wait) and its enqueued / dead totals. */
export async function queueCounts(db: Db, now: string): Promise<{ due: number; oldestRunAt: string | null; queued: number; dead: number }> {
  const [due, queued, dead] = await Promise.all([
    db.selectFrom('background_jobs').select([sql<number>`count(*)`.as('n'), sql<string | null>`min(run_at)`.as('oldest')])
      .where('state', '=', 'queued').where('run_at', '<=', now).executeTakeFirstOrThrow(),
    db.selectFrom('background_jobs').select(sql<number>`count(*)`.as('n')).where('state', '=', 'queued').executeTakeFirstOrThrow(),
    db.selectFrom('background_jobs').select(sql<number>`count(*)`.as('n')).where('state', '=', 'dead').executeTakeFirstOrThrow(),
  ]);
  return { due: Number(due.n), oldestRunAt: due.oldest, queued: Number(queued.n), dead: Number(dead.n) };
}
