/**
 * The access levels a protected branch or tag may require (CE's ProtectedRefAccess: role-based
 * levels only; users, groups and deploy keys are Premium) and how the API describes them.
 */

export const NO_ACCESS = 0;
export const DEVELOPER = 30;
export const MAINTAINER = 40;

/** ProtectedRefAccess.allowed_access_levels in CE 15.2: 60 (admins) is not among them. */
export const ALLOWED_ACCESS_LEVELS = [MAINTAINER, DEVELOPER, NO_ACCESS] as const;

const DESCRIPTIONS: Record<number, string> = {
  [MAINTAINER]: 'Maintainers',
  [DEVELOPER]: 'Developers + Maintainers',
  [NO_ACCESS]: 'No one',
};

export function accessLevelDescription(level: number): string {
  return DESCRIPTIONS[level] ?? '';
}

/** Gitlab::Access::BranchProtection: the `default_branch_protection` setting's values. */
export const BRANCH_PROTECTION = { none: 0, developerCanPush: 1, full: 2, developerCanMerge: 3 } as const;

/** The push and merge levels the default branch is protected with (Projects::ProtectDefaultBranchService); null for none. */
export function defaultBranchLevels(protection: number): { push: number; merge: number } | null {
  if (protection === BRANCH_PROTECTION.none) return null;
  return {
    push: protection === BRANCH_PROTECTION.developerCanPush ? DEVELOPER : MAINTAINER,
    merge: protection === BRANCH_PROTECTION.developerCanMerge ? DEVELOPER : MAINTAINER,
  };
}

/**
 * Project#default_branch_protected?: fully protected, or developers may only merge. Then nobody
 * below Maintainer may push the first branch of an empty repository.
 */
export function defaultBranchProtected(protection: number): boolean {
  return protection === BRANCH_PROTECTION.full || protection === BRANCH_PROTECTION.developerCanMerge;
}
