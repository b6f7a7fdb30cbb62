/**
 * The administrator's state operations on a user (spec, User operations and their guards;
 * reference §1.7, 15.x variants): for each, a pure decision from the user's row to either a
 * refusal (status and the exact message, some with the "403 Forbidden - " prefix and some
 * without) or an outcome: the event to fire, if any, and the bare JSON literal to answer.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { changeUserState } from './users.queries.ts';
import { addDays } from '../clock.ts';
import { humanStateName, transition, type UserEvent } from './state-machine.ts';
import { isBlockedState, isInternal } from './user-kind.ts';

export type StateOperation = 'block' | 'unblock' | 'deactivate' | 'activate' | 'ban' | 'unban';

export type Decision =
  /** Fire `event` (when given) and answer 201 with `body`: `true`, or `false` when the event cannot fire. */
  | { kind: 'proceed'; event: UserEvent | null; body: boolean | null }
  /** `prefixed`: the message follows "403 Forbidden - " (the `forbidden!` helper). */
  | { kind: 'refuse'; status: 403; message: string; prefixed: boolean };

/** Users active in this many days cannot be deactivated (User::MINIMUM_INACTIVE_DAYS in 15.x). */
export const MINIMUM_INACTIVE_DAYS = 90;

const refuse = (message: string, prefixed: boolean): Decision => ({ kind: 'refuse', status: 403, message, prefixed });
const fire = (event: UserEvent): Decision => ({ kind: 'proceed', event, body: true });
/** `user.activate` answers whether the transition happened: `false` for an active user. */
const activate = (user: UserRow): Decision => ({ kind: 'proceed', event: 'activate', body: transition(user.state, 'activate') !== null });

/** The later of last_activity_on and current_sign_in_at (User#last_active_at), or null. */
export function lastActiveAt(user: UserRow): Date | null {
  const times = [user.last_activity_on && `${user.last_activity_on}T00:00:00.000Z`, user.current_sign_in_at]
    .filter((t): t is string => Boolean(t)).map((t) => new Date(t));
  return times.length === 0 ? null : new Date(Math.max(...times.map((d) => d.getTime())));
}

/** User#can_be_deactivated?: active, not internal, and no activity in the last 90 days. */
export function canBeDeactivated(user: UserRow, now: Date): boolean {
  const last = lastActiveAt(user);
  const dormant = last === null || last.getTime() <= addDays(now, -MINIMUM_INACTIVE_DAYS).getTime();
  return user.state === 'active' && dormant && !isInternal(user);
}

export const DECIDE: Readonly<Record<StateOperation, (user: UserRow, now: Date) => Decision>> = {
  block(user) {
    if (user.state === 'ldap_blocked') return refuse('LDAP blocked users cannot be modified by the API', true);
    // Already blocked in any way (banned and pending included): nothing happens, the body is null.
    if (isBlockedState(user.state)) return { kind: 'proceed', event: null, body: null };
    if (isInternal(user)) return refuse('An internal user cannot be blocked', false);
    return fire('block');
  },
  unblock(user) {
    if (user.state === 'ldap_blocked') return refuse('LDAP blocked users cannot be unblocked by the API', true);
    if (user.state === 'deactivated') return refuse('Deactivated users cannot be unblocked by the API', true);
    return activate(user);
  },
  activate(user) {
    if (isBlockedState(user.state)) return refuse('A blocked user must be unblocked to be activated', true);
    return activate(user);
  },
  deactivate(user, now) {
    if (user.state === 'deactivated') return { kind: 'proceed', event: null, body: null };
    if (!canBeDeactivated(user, now)) {
      if (isBlockedState(user.state)) return refuse('A blocked user cannot be deactivated by the API', true);
      if (isInternal(user)) return refuse('An internal user cannot be deactivated by the API', true);
      return refuse(
        `The user you are trying to deactivate has been active in the past ${MINIMUM_INACTIVE_DAYS} days and cannot be deactivated`,
        true,
      );
    }
    return fire('deactivate');
  },
  ban(user) {
    if (user.state !== 'active') return refuse(`You cannot ban ${humanStateName(user.state)} users.`, false);
    return fire('ban');
  },
  unban(user) {
    if (user.state !== 'banned') return refuse(`You cannot unban ${humanStateName(user.state)} users.`, false);
    return fire('unban');
  },
};

/**
 * Fires `event` from the state the caller read; `false` when the event cannot fire from it or a
 * concurrent change moved the user first (the update is conditional on the state read). Shared by
 * the API's /users/:id/<operation> routes and the administrators' users page.
 */
export async function fireUserEvent(db: Kysely<DB>, user: UserRow, event: UserEvent): Promise<boolean> {
  const to = transition(user.state, event);
  if (to === null) return false;
  return changeUserState(db, user.id, user.state, to);
}

/** Why a user cannot be approved (Users::ApproveService): 403 for a blocked user, 409 for any other not pending. */
export const NOT_PENDING_APPROVAL = 'The user you are trying to approve is not pending approval';

/** Approving a user pending approval (reference §0.3): null when done, or the refusal's status. */
export async function approveUser(db: Kysely<DB>, user: UserRow): Promise<null | 403 | 409> {
  if (user.state === 'blocked' || user.state === 'ldap_blocked') return 403;
  if (user.state !== 'blocked_pending_approval' || !(await fireUserEvent(db, user, 'activate'))) return 409;
  return null;
}
