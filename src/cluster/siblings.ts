/**
 * The server processes of one KILN_WORKERS primary, without Redis: what one of them must make the
 * others forget (a revoked token, a changed user, any write to the shared database) goes to the
 * primary over the IPC channel node:cluster opens, and the primary hands it to every other
 * process (cluster/workers.ts). The same messages travel through Redis when KILN_REDIS_URL is set
 * (cluster/cluster.ts), which also reaches the processes of other machines.
 */
import { AuthCache } from '../http/auth/cache.ts';
import { SettingsCache } from '../domain/settings/settings-cache.ts';
import type { WriteEpoch } from '../db/write-epoch.ts';
import { announceWrites, WRITES, type Cluster } from './cluster.ts';
import { PrimaryRateLimitStore } from './rate-limit-store.ts';

/** The envelope of an invalidation between a worker and its primary. */
export interface SiblingMessage {
  kiln: 'invalidate';
  body: string;
}

export function isSiblingMessage(message: unknown): message is SiblingMessage {
  return typeof message === 'object' && message !== null && (message as SiblingMessage).kiln === 'invalidate'
    && typeof (message as SiblingMessage).body === 'string';
}

/** Joins the other processes of this primary; call only in a node:cluster worker. */
export function joinSiblings(opts: { writes: WriteEpoch; onError?: (err: unknown) => void }): Cluster {
  const publish = (body: string): void => {
    // The channel closes when the primary goes away (shutting down): nobody is left to tell.
    if (!process.send || !process.connected) return;
    const message: SiblingMessage = { kiln: 'invalidate', body };
    process.send(message, undefined, {}, (err: Error | null) => {
      if (err) opts.onError?.(err);
    });
  };
  const authCache = new AuthCache({ publish });
  const settingsCache = new SettingsCache({ publish });
  announceWrites(opts.writes, publish);
  const receive = (message: unknown): void => {
    if (!isSiblingMessage(message)) return;
    if (message.body === WRITES) opts.writes.movedElsewhere();
    else if (!settingsCache.receive(message.body)) authCache.receive(message.body);
  };
  process.on('message', receive);
  return {
    redis: null, keyPrefix: '', authCache, settingsCache, rateLimitStore: PrimaryRateLimitStore,
    close: async () => {
      opts.writes.onWrite = null;
      process.off('message', receive);
    },
  };
}
