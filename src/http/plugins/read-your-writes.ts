/**
 * Several kiln processes on one database (README, Several instances): a write answered by one of
 * them is seen at once by the next request on any other, even though each remembers credentials,
 * settings and rows for a while. The cluster (cluster/cluster.ts) numbers every announcement of a
 * change in Redis; here every request first waits until its process has heard each announcement
 * made before it arrived, and every answer waits until the announcements of its own writes are
 * in Redis. A client that got an answer from one process and then asks another is therefore
 * answered from what the first wrote. It costs one Redis round trip a request (plus one for a
 * request that wrote); without Redis (one process, or KILN_WORKERS' siblings) there is nothing to
 * wait for and no hook is installed.
 */
import fp from 'fastify-plugin';
import type { onRequestHookHandler, onSendHookHandler } from 'fastify';

/** What the cluster offers; this layer does not import cluster/ (src/cluster provides it). */
export interface Consistency {
  /** Null when every change this process announced is already in Redis. */
  settled(): Promise<void> | null;
  /** Resolves once this process has heard every change announced before the call. */
  caughtUp(): Promise<void>;
}

export default fp<{ consistency: Consistency | null }>(async (app, opts) => {
  const c = opts.consistency;
  if (!c) return;
  const before: onRequestHookHandler = (_request, _reply, done) => {
    c.caughtUp().then(() => done(), done);
  };
  const after: onSendHookHandler = (_request, _reply, payload, done) => {
    const pending = c.settled();
    if (!pending) {
      done(null, payload);
      return;
    }
    pending.then(() => done(null, payload), (err: unknown) => done(err as Error));
  };
  app.addHook('onRequest', before);
  app.addHook('onSend', after);
}, { name: 'read-your-writes' });
