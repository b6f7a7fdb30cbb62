/**
 * Two processes writing to one database at the same moment (KILN_WORKERS, issue 17 item 4): a
 * transaction that read before another process committed still writes and commits, and the other
 * process's write waits for it instead of failing. On SQLite this needs the transaction to take
 * the write lock when it begins (src/db/database.ts): a deferred one would fail its first write
 * with SQLITE_BUSY (SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const DATABASE = path.join(import.meta.dirname, '..', '..', 'src', 'db', 'database.ts');

/**
 * Another process that writes one settings row through its own handle once told to (`go`), so
 * that the write starts while this process's transaction is open; `done` resolves when it has.
 */
function writeFromAnotherProcess(t: TestApp, name: string): { started: Promise<void>; go: () => void; done: Promise<void> } {
  const script = `
    import { openDatabase } from ${JSON.stringify(DATABASE)};
    const database = openDatabase(JSON.parse(process.env.OPEN));
    process.stdout.write('open\\n');
    await new Promise((resolve) => process.stdin.once('data', resolve));
    process.stdin.destroy();
    await database.db.insertInto('application_settings').values({ name: process.env.NAME, value: '1', updated_at: new Date().toISOString() }).execute();
    await database.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, OPEN: JSON.stringify({ dataDir: t.dataDir, databaseUrl: t.config.databaseUrl }), NAME: name },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  const started = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const done = new Promise<void>((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}: ${err}`)))));
  return { started, go: () => child.stdin.write('go\n'), done };
}

describe('writers in two processes at once', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
  });

  it('commits a transaction that read before the other process wrote, and the other write too', async () => {
    const other = writeFromAnotherProcess(t, 'concurrent-writer-b');
    await other.started;
    let otherFinishedFirst = false;
    await t.db.transaction().execute(async (trx) => {
      await trx.selectFrom('application_settings').select('name').execute();
      other.go();
      // The other process writes now: without waiting on SQLite (this transaction holds the write
      // lock) or at once on PostgreSQL. Give it the time to do so either way.
      otherFinishedFirst = await Promise.race([other.done.then(() => true), sleep(1_000).then(() => false)]);
      await trx.insertInto('application_settings').values({ name: 'concurrent-writer-a', value: '1', updated_at: new Date().toISOString() }).execute();
    });
    await other.done;
    const names = (await t.db.selectFrom('application_settings').select('name').where('name', 'like', 'concurrent-writer-%').orderBy('name').execute()).map((r) => r.name);
    assert.deepEqual(names, ['concurrent-writer-a', 'concurrent-writer-b']);
    // SQLite: the other writer waited for this transaction's lock.
    if (t.dialect === 'sqlite') assert.equal(otherFinishedFirst, false);
  });
});
