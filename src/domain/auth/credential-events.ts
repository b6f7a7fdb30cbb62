/**
 * Credential events: the one port through which the domain says that what a credential stands
 * for changed (issue 27, item 3). Interfaces remember a resolved credential — token or session,
 * with its owner's row — for a few seconds (http/auth/cache.ts); a write that revokes a token or
 * changes a user must end that at once, on every process, or a blocked user or a revoked token
 * would go on working until the entry expires.
 *
 * The functions that do those writes announce them here (the *.queries.ts functions that revoke
 * tokens, delete sessions, update or delete users; deleteApplication; SCIM's deprovision), so
 * no interface has to remember to: REST, GraphQL, SCIM, the web pages, OAuth and background work
 * all write through them. The HTTP layer listens once per application (http/plugins/authentication.ts).
 *
 * Events belong to a database handle: what is written through one application's handle is heard
 * by that application's listeners only, and reaches the other processes through their cluster
 * broadcast as before. Announcing inside a transaction waits for its commit (db/after-commit.ts):
 * a listener that dropped the entry earlier would let a concurrent request read and remember the
 * old row again, and a rolled-back write announces nothing.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { afterCommit } from '../../db/after-commit.ts';

/** The kinds of credential a request can present (reference §5.1). */
export type CredentialKind = 'personal_access_token' | 'impersonation_token' | 'oauth_token' | 'session' | 'job_token';

export type CredentialEvent =
  /**
   * The user's row changed or the user is gone: every credential of theirs stands for the new
   * row or for nobody. `change` says how: an attribute (admin flag, password and its expiry,
   * name…), the state (block, ban, deactivate, approve…), two-factor authentication, the
   * account deleted, or the access a group gave withdrawn (SCIM deprovisioning).
   */
  | { type: 'user'; userId: number; change: 'updated' | 'state' | 'two_factor' | 'deleted' | 'access' }
  /** One credential stopped working: revoked, or deleted with what it belonged to. */
  | { type: 'token'; kind: CredentialKind; id: number; change: 'revoked' | 'deleted' };

export type CredentialListener = (event: CredentialEvent) => void;

const listeners = new WeakMap<Kysely<DB>, Set<CredentialListener>>();

/**
 * Hears every credential event announced through `db` (an application's handle) from now on,
 * until the returned function is called.
 */
export function onCredentialEvent(db: Kysely<DB>, listener: CredentialListener): () => void {
  let set = listeners.get(db);
  if (!set) {
    set = new Set();
    listeners.set(db, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(db) === set) listeners.delete(db);
  };
}

/** Announces `events` to the listeners of `db`'s handle once what `db` wrote is committed. */
export function announceCredentialEvents(db: Kysely<DB> | Transaction<DB>, events: readonly CredentialEvent[]): Promise<void> {
  if (events.length === 0) return Promise.resolve();
  return afterCommit(db, (root) => {
    const heard = listeners.get(root);
    if (!heard) return;
    // Every listener is told even when one fails (after-commit.ts reports the failures); a copy,
    // as a listener may unsubscribe while it is told.
    const failures: unknown[] = [];
    for (const listener of [...heard]) {
      for (const event of events) {
        try {
          listener(event);
        } catch (err) {
          failures.push(err);
        }
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'a credential event listener failed');
  });
}

export function userChanged(userId: number, change: Extract<CredentialEvent, { type: 'user' }>['change']): CredentialEvent {
  return { type: 'user', userId, change };
}

export function tokenRevoked(kind: CredentialKind, id: number, change: 'revoked' | 'deleted' = 'revoked'): CredentialEvent {
  return { type: 'token', kind, id, change };
}
