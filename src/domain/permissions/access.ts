/**
 * Access levels and visibility levels of the Service (Gitlab::Access, Gitlab::VisibilityLevel),
 * and the role names the policy tables speak.
 */

export const ACCESS_LEVELS = {
  no_access: 0,
  guest: 10,
  reporter: 20,
  developer: 30,
  maintainer: 40,
  owner: 50,
} as const;

/** The levels a membership may hold (CONTRACT §4: 10 guest … 50 owner). */
export const MEMBER_ACCESS_LEVELS = [10, 20, 30, 40, 50] as const;
export type MemberAccessLevel = (typeof MEMBER_ACCESS_LEVELS)[number];

export const VISIBILITY_LEVELS = { private: 0, internal: 10, public: 20 } as const;
export type Visibility = keyof typeof VISIBILITY_LEVELS;
export const VISIBILITIES = ['private', 'internal', 'public'] as const;

export function visibilityName(level: number): Visibility {
  if (level >= VISIBILITY_LEVELS.public) return 'public';
  if (level >= VISIBILITY_LEVELS.internal) return 'internal';
  return 'private';
}

export function visibilityLevel(name: Visibility): number {
  return VISIBILITY_LEVELS[name];
}

/** Who is asking: null user means anonymous. `accessLevel` is the effective membership level. */
export interface Actor {
  user: { id: number; admin: number | boolean; external: number | boolean } | null;
  /** Highest of the direct and inherited (group) memberships; 0 when none. */
  accessLevel: number;
}

export type Role = 'anonymous' | 'non_member' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'administrator';

export function roleOf(actor: Actor): Role {
  if (!actor.user) return 'anonymous';
  if (actor.user.admin) return 'administrator';
  const level = actor.accessLevel;
  if (level >= ACCESS_LEVELS.owner) return 'owner';
  if (level >= ACCESS_LEVELS.maintainer) return 'maintainer';
  if (level >= ACCESS_LEVELS.developer) return 'developer';
  if (level >= ACCESS_LEVELS.reporter) return 'reporter';
  if (level >= ACCESS_LEVELS.guest) return 'guest';
  return 'non_member';
}

/**
 * Whether a reader sees something of this visibility without being a member: public to
 * everyone, internal to signed-in users who are not external (Gitlab::VisibilityLevel).
 */
export function visibleWithoutMembership(actor: Actor, visibilityLevelValue: number): boolean {
  if (visibilityLevelValue >= VISIBILITY_LEVELS.public) return true;
  if (visibilityLevelValue >= VISIBILITY_LEVELS.internal) return actor.user !== null && !actor.user.external;
  return false;
}
