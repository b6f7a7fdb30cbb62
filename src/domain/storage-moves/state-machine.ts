/**
 * The storage-move lifecycle as a table (reference §4; aesthetics §2: the Service's
 * RepositoryStorageMovable). States are stored as the Service's integers; the API shows their
 * lowercase names (reference §11).
 *
 *   schedule            initial → scheduled              container read-only, worker enqueued
 *   start               scheduled → started
 *   finish_replication  started → replicated             storage switched, container writable
 *   finish_cleanup      replicated → finished
 *   do_fail             initial | scheduled | started → failed   container writable again
 *                       replicated → cleanup_failed      (already switched and writable)
 *
 * The side effects named here are carried out by the service (storage-moves.service.ts) in the
 * same transaction as the transition, so a state and its effect are never seen apart.
 */

export const MOVE_STATES = {
  initial: 1,
  scheduled: 2,
  started: 3,
  finished: 4,
  failed: 5,
  replicated: 6,
  cleanup_failed: 7,
} as const;

export type MoveStateName = keyof typeof MOVE_STATES;
export type MoveState = (typeof MOVE_STATES)[MoveStateName];
export type MoveEvent = 'schedule' | 'start' | 'finish_replication' | 'finish_cleanup' | 'do_fail';

/** What a transition asks of the container besides the state change. */
export type SideEffect = 'mark_read_only_and_enqueue' | 'switch_storage_and_mark_writable' | 'mark_writable' | null;

interface Transition {
  from: MoveStateName;
  to: MoveStateName;
  effect: SideEffect;
}

export const TRANSITIONS: Record<MoveEvent, Transition[]> = {
  schedule: [{ from: 'initial', to: 'scheduled', effect: 'mark_read_only_and_enqueue' }],
  start: [{ from: 'scheduled', to: 'started', effect: null }],
  finish_replication: [{ from: 'started', to: 'replicated', effect: 'switch_storage_and_mark_writable' }],
  finish_cleanup: [{ from: 'replicated', to: 'finished', effect: null }],
  do_fail: [
    { from: 'initial', to: 'failed', effect: 'mark_writable' },
    { from: 'scheduled', to: 'failed', effect: 'mark_writable' },
    { from: 'started', to: 'failed', effect: 'mark_writable' },
    { from: 'replicated', to: 'cleanup_failed', effect: null },
  ],
};

/** States in which a move holds its container (read-only, or about to be): one at a time. */
export const ACTIVE_STATES: MoveState[] = [MOVE_STATES.initial, MOVE_STATES.scheduled, MOVE_STATES.started, MOVE_STATES.replicated];

const NAMES = new Map<number, MoveStateName>(Object.entries(MOVE_STATES).map(([name, value]) => [value, name as MoveStateName]));

export function stateName(state: number): MoveStateName {
  const name = NAMES.get(state);
  if (!name) throw new Error(`unknown storage move state ${state}`);
  return name;
}

/** The transition `event` takes from `state`, or null when the event does not apply there. */
export function transition(state: number, event: MoveEvent): { to: MoveState; effect: SideEffect } | null {
  const from = stateName(state);
  const t = TRANSITIONS[event].find((candidate) => candidate.from === from);
  return t ? { to: MOVE_STATES[t.to], effect: t.effect } : null;
}
