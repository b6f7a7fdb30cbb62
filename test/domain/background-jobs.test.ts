/**
 * The job queue (DESIGN, Stack: background work) on the engine under test: atomic claims (two
 * claimers never get one job), leases (an expired one is taken over: crash recovery), retries
 * with backoff, giving up after max_attempts, wake-up on enqueue, and a graceful stop that hands
 * running jobs back to the queue.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { JobQueue } from '../../src/domain/background-jobs/job-queue.ts';
import { claimJob } from '../../src/domain/background-jobs/background-jobs.queries.ts';
import { JobRunner } from '../../src/workers/job-runner.ts';
import { waitFor } from '../helpers/storage-shards.ts';

let t: TestApp;
const log = { error: () => undefined, warn: () => undefined };

before(async () => {
  // The app's own workers run nothing here: these tests drive queues of their own.
  t = await startTestApp({ KILN_JOB_CONCURRENCY: '0' });
});
after(() => t.close());

async function clear() {
  await t.db.deleteFrom('background_jobs').execute();
}

test('an empty poll writes nothing, so remembered rows stay valid', async () => {
  await clear();
  const epoch = t.writes.value;
  assert.equal(await claimJob(t.db, t.dialect, { owner: 'idle', leaseMs: 60_000, kinds: ['test.claim'] }), null);
  assert.equal(t.writes.value, epoch);
});

test('concurrent claims take each job exactly once', async () => {
  await clear();
  const queue = new JobQueue(t.db, t.dialect);
  for (let i = 0; i < 20; i++) await queue.enqueue('test.claim', { i });
  const claims = await Promise.all(Array.from({ length: 30 }, (_, n) => claimJob(t.db, t.dialect, { owner: `w${n}`, leaseMs: 60_000, kinds: ['test.claim'] })));
  const taken = claims.filter((c) => c !== null).map((c) => c!.id);
  assert.equal(taken.length, 20);
  assert.equal(new Set(taken).size, 20);
  assert.equal(await claimJob(t.db, t.dialect, { owner: 'late', leaseMs: 60_000, kinds: ['test.claim'] }), null);
  const rows = await t.db.selectFrom('background_jobs').selectAll().execute();
  assert.ok(rows.every((r) => r.state === 'running' && r.attempts === 1 && r.lease_owner !== null));
});

test('an expired lease is taken over; a live one is not', async () => {
  await clear();
  const queue = new JobQueue(t.db, t.dialect);
  await queue.enqueue('test.lease', {});
  const first = await claimJob(t.db, t.dialect, { owner: 'crashed', leaseMs: 100, kinds: ['test.lease'] });
  assert.ok(first);
  assert.equal(await claimJob(t.db, t.dialect, { owner: 'other', leaseMs: 100, kinds: ['test.lease'] }), null);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const second = await claimJob(t.db, t.dialect, { owner: 'other', leaseMs: 100, kinds: ['test.lease'] });
  assert.equal(second?.id, first.id);
  assert.equal(second?.attempts, 2);
  assert.equal(second?.lease_owner, 'other');
});

test('a runner runs handlers on enqueue, retries failures with backoff, and gives up after max_attempts', async () => {
  await clear();
  const queue = new JobQueue(t.db, t.dialect);
  const seen: number[] = [];
  let flakyRuns = 0;
  const givenUp: string[] = [];
  queue.registerHandler('test.ok', async (p: { n: number }) => { seen.push(p.n); });
  queue.registerHandler('test.flaky', async () => {
    flakyRuns += 1;
    if (flakyRuns < 3) throw new Error(`flaky run ${flakyRuns}`);
  });
  queue.registerHandler('test.broken', async () => { throw new Error('always broken'); }, {
    maxAttempts: 2, onGiveUp: async (_p, lastError) => { givenUp.push(lastError); },
  });
  // A long poll: only the wake-up on enqueue (and retries) can make these jobs run quickly.
  const runner = new JobRunner(queue, { concurrency: 2, pollMs: 60_000, leaseMs: 5000, retryBaseMs: 20, log });
  runner.start();
  try {
    await queue.enqueue('test.ok', { n: 1 });
    await queue.enqueue('test.ok', { n: 2 });
    await waitFor('the jobs', async () => (seen.length === 2 ? true : undefined), 5000);
    assert.deepEqual(seen.sort(), [1, 2]);

    // Retries wait run_at out; the poll is long, so nudge the runner as a new enqueue would.
    await queue.enqueue('test.flaky', {});
    await queue.enqueue('test.broken', {});
    await waitFor('retries', async () => {
      queue.wake();
      const rows = await t.db.selectFrom('background_jobs').selectAll().execute();
      return flakyRuns === 3 && rows.length === 1 && rows[0].state === 'dead' ? rows : undefined;
    }, 10_000);
    const dead = await t.db.selectFrom('background_jobs').selectAll().executeTakeFirstOrThrow();
    assert.equal(dead.kind, 'test.broken');
    assert.equal(dead.attempts, 2);
    assert.equal(dead.last_error, 'always broken');
    assert.deepEqual(givenUp, ['always broken']);
  } finally {
    await runner.stop();
  }
});

test('stop() aborts running handlers and hands their jobs back unchanged', async () => {
  await clear();
  const queue = new JobQueue(t.db, t.dialect);
  let started = false;
  queue.registerHandler('test.slow', (_p, ctx) => new Promise((_resolve, reject) => {
    started = true;
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
  }));
  const runner = new JobRunner(queue, { concurrency: 1, pollMs: 20, leaseMs: 5000, log });
  runner.start();
  await queue.enqueue('test.slow', {});
  await waitFor('the handler', async () => (started ? true : undefined));
  await runner.stop();
  const row = await t.db.selectFrom('background_jobs').selectAll().executeTakeFirstOrThrow();
  assert.deepEqual([row.state, row.attempts, row.lease_owner], ['queued', 0, null]);
});

test('a lease is renewed while its handler runs', async () => {
  await clear();
  const queue = new JobQueue(t.db, t.dialect);
  let finish: (() => void) | null = null;
  queue.registerHandler('test.long', () => new Promise<void>((resolve) => { finish = resolve; }));
  const runner = new JobRunner(queue, { concurrency: 1, pollMs: 20, leaseMs: 300, log });
  runner.start();
  try {
    await queue.enqueue('test.long', {});
    await waitFor('the handler', async () => (finish ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Past two lease lengths, nobody may take it over.
    assert.equal(await claimJob(t.db, t.dialect, { owner: 'thief', leaseMs: 300, kinds: ['test.long'] }), null);
    finish!();
    await waitFor('the job to leave the table', async () => ((await t.db.selectFrom('background_jobs').select('id').execute()).length === 0 ? true : undefined));
  } finally {
    await runner.stop();
  }
});
