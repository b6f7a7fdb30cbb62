/**
 * Shutdown closes the database only after running handlers finish (src/http/plugins/
 * running-handlers.ts, src/server.ts): Fastify's close does not wait for a handler whose client
 * has gone, whose next query would otherwise meet a closed pool or connection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { startTestApp } from '../helpers/app.ts';

describe('shutdown', () => {
  it('waits for a running handler before closing the database, and counts handlers', { timeout: 30_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => { entered = resolve; });
    let read: unknown = null;
    const t = await startTestApp({}, {
      plugins: [async (app: FastifyInstance) => {
        app.get('/test/slow-read', { config: { auth: 'optional' } }, async () => {
          entered();
          await gate;
          // The query after the wait is the one a closed database would fail.
          read = await app.kiln.db.selectFrom('users').select('username').where('id', '=', 1).executeTakeFirst()
            .catch((err: unknown) => err);
          return { ok: true };
        });
      }],
    });
    const answer = t.request({ url: '/test/slow-read' });
    await inHandler;
    assert.equal(t.app.runningHandlers.count(), 1);
    const closed = t.close();
    // close() is now waiting on the handler; let it go on after a moment.
    await new Promise((r) => setTimeout(r, 100));
    release();
    await closed;
    await answer;
    assert.deepEqual(read, { username: 'root' });
    assert.equal(t.app.runningHandlers.count(), 0);
  });
});
