/**
 * A short-lived, in-process cache of resolved credentials: token digest → token and owner rows.
 * Entries live a few seconds; writes that revoke a token or change a user invalidate them at
 * once, locally and, with KILN_REDIS_URL or KILN_WORKERS, on every other process (DESIGN,
 * Performance shape). The writes say so through the domain's credential events, which the
 * authentication plugin hands to `hear` (http/plugins/authentication.ts); nothing else calls
 * the invalidations.
 */
import type { UserRow } from '../../db/types.ts';
import type { CredentialEvent } from '../../domain/auth/credential-events.ts';
import type { Credential } from './caller.ts';

export interface CachedCredential {
  credential: Credential;
  user: UserRow;
  /** ISO date or timestamp after which the credential stops working, if any. */
  expiresAt: string | null;
  revoked: boolean;
  /** The last day activity was recorded for this user from this entry. */
  activityRecordedOn?: string;
  /** The token's last_used_at as read with it, ms since the epoch (personal and impersonation tokens). */
  lastUsedAt?: number;
}

interface Entry {
  value: CachedCredential;
  until: number;
}

const MAX_ENTRIES = 50_000;

export class AuthCache {
  private readonly entries = new Map<string, Entry>();
  /** When this process last wrote each token's last_used_at (ms), kept past its entry's expiry. */
  private readonly usageWrites = new Map<number, number>();
  private readonly ttlMs: number;
  private readonly publish: ((message: string) => void) | null;

  constructor(opts: { ttlMs?: number; publish?: (message: string) => void } = {}) {
    this.ttlMs = opts.ttlMs ?? 5_000;
    this.publish = opts.publish ?? null;
  }

  get(digest: string, now = Date.now()): CachedCredential | undefined {
    const e = this.entries.get(digest);
    if (!e) return undefined;
    if (e.until < now) {
      this.entries.delete(digest);
      return undefined;
    }
    return e.value;
  }

  set(digest: string, value: CachedCredential, now = Date.now()): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(digest, { value, until: now + this.ttlMs });
  }

  /** When this process last recorded the use of personal access token `id` (ms since the epoch). */
  usageWrittenAt(id: number): number | undefined {
    return this.usageWrites.get(id);
  }

  noteUsageWritten(id: number, at: number): void {
    if (this.usageWrites.size >= MAX_ENTRIES) this.usageWrites.clear();
    this.usageWrites.set(id, at);
  }

  /** A credential event of this process's writes: forget what it changed, here and on the other processes. */
  hear(event: CredentialEvent): void {
    if (event.type === 'user') this.invalidateUser(event.userId);
    else this.invalidateToken(event.kind, event.id);
  }

  /** After a user changes (state, admin flag, deletion): drop every credential of theirs. */
  invalidateUser(userId: number, broadcast = true): void {
    for (const [k, e] of this.entries) if (e.value.user.id === userId) this.entries.delete(k);
    if (broadcast) this.publish?.(`user:${userId}`);
  }

  /** After a token is revoked or deleted. */
  invalidateToken(kind: Credential['kind'], id: number, broadcast = true): void {
    for (const [k, e] of this.entries) if (e.value.credential.kind === kind && e.value.credential.id === id) this.entries.delete(k);
    if (broadcast) this.publish?.(`token:${kind}:${id}`);
  }

  clear(): void {
    this.entries.clear();
    this.usageWrites.clear();
  }

  /** Applies an invalidation received from another process. */
  receive(message: string): void {
    const [what, a, b] = message.split(':');
    if (what === 'user') this.invalidateUser(Number(a), false);
    else if (what === 'token') this.invalidateToken(a as Credential['kind'], Number(b), false);
  }
}
