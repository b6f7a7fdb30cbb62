/**
 * The user state machine of the Service (reference §1.8; app/models/user.rb `state_machine
 * :state`): the states, the events with the states each may leave from, and a pure transition().
 * Who may fire an event and what the API answers is decided in state-operations.ts.
 */

export const USER_STATES = ['active', 'blocked', 'ldap_blocked', 'blocked_pending_approval', 'banned', 'deactivated'] as const;
export type UserState = (typeof USER_STATES)[number];

export type UserEvent = 'block' | 'ldap_block' | 'activate' | 'block_pending_approval' | 'ban' | 'unban' | 'deactivate';

export const TRANSITIONS: Readonly<Record<UserEvent, { from: readonly UserState[]; to: UserState }>> = {
  block: { from: ['active', 'deactivated', 'ldap_blocked', 'blocked_pending_approval', 'banned'], to: 'blocked' },
  ldap_block: { from: ['active', 'deactivated'], to: 'ldap_blocked' },
  activate: { from: ['deactivated', 'blocked', 'ldap_blocked', 'blocked_pending_approval', 'banned'], to: 'active' },
  block_pending_approval: { from: ['active'], to: 'blocked_pending_approval' },
  ban: { from: ['active'], to: 'banned' },
  unban: { from: ['banned'], to: 'active' },
  deactivate: { from: ['active'], to: 'deactivated' },
};

/** The state `event` leads to from `state`, or null when the event cannot fire there. */
export function transition(state: string, event: UserEvent): UserState | null {
  const t = TRANSITIONS[event];
  return (t.from as readonly string[]).includes(state) ? t.to : null;
}

/** The state's name as the Service words it in messages (`human_state_name`): "ldap blocked". */
export function humanStateName(state: string): string {
  return state.replace(/_/g, ' ');
}
