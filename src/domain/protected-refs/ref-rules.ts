/**
 * The decisions about protected branches and tags, as pure functions over a project's rules and
 * the person asking (the Service's Gitlab::UserAccess, ProtectedBranch, ProtectedTag and the ref
 * checks of Gitlab::Checks::BranchCheck / TagCheck, CE 15.2). They take plain data and import
 * nothing that needs a database, so the pre-receive hook (src/git/hooks/) asks the very same
 * functions as the API, CI and merge requests. protected-refs.ts loads the rules.
 */
import { NO_ACCESS } from './access-levels.ts';
import { refMatches } from './ref-matcher.ts';

export interface BranchRule {
  name: string;
  allowForcePush: boolean;
  push: number[];
  merge: number[];
}

export interface TagRule {
  name: string;
  create: number[];
}

/** One project's protected branches and tags, and what protects an empty repository. */
export interface ProtectionRules {
  branches: BranchRule[];
  tags: TagRule[];
  /**
   * Project#default_branch_protected? (the default_branch_protection setting fully protects the
   * default branch or lets developers only merge): every branch of an empty repository is then
   * protected and only Maintainers and administrators may push the first one.
   */
  defaultBranchProtected: boolean;
}

/**
 * Who asks, as the project sees them: null for nobody signed in. `canPushCode` is the project
 * policy's push_code (Developer and up on a project that is not archived, or an administrator).
 */
export interface RefActor {
  admin: boolean;
  /** The highest membership level in the project (direct or through its groups); 0 for none. */
  accessLevel: number;
  canPushCode: boolean;
}

/** What is known of the repository a decision is about. */
export interface RepositoryState {
  /** The repository has no branches yet (Project#empty_repo?). */
  emptyRepo: boolean;
}

export const BRANCH_MESSAGES = {
  deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
  forcePushProtectedBranch: 'You are not allowed to force push code to a protected branch on this project.',
  nonMasterDeleteProtectedBranch: 'You are not allowed to delete protected branches from this project. '
    + 'Only a project maintainer or owner can delete a protected branch.',
  nonWebDeleteProtectedBranch: 'You can only delete protected branches using the web interface.',
  mergeProtectedBranch: 'You are not allowed to merge code into protected branches on this project.',
  pushProtectedBranch: 'You are not allowed to push code to protected branches on this project.',
  createProtectedBranch: 'You are not allowed to create protected branches on this project.',
  invalidCommitCreateProtectedBranch: 'You can only use an existing protected branch ref as the basis of a new protected branch.',
  nonWebCreateProtectedBranch: 'You can only create protected branches using the web interface and API.',
} as const;

export const TAG_MESSAGES = {
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteProtectedTag: 'Protected tags cannot be deleted.',
  createProtectedTag: 'You are not allowed to create this tag as it is protected.',
} as const;

/** GitAccess's push_code refusal, also what a push changing a ref it may not change answers (Gitlab::Checks::PushCheck). */
export const PUSH_CODE_DENIED = 'You are not allowed to push code to this project.';

/** What the API's commit and file writes answer when the branch refuses the caller (authorize_push_to_branch!). */
export const PUSH_INTO_BRANCH_DENIED = 'You are not allowed to push into this branch';

export function matchingBranchRules(rules: ProtectionRules, branch: string): BranchRule[] {
  return rules.branches.filter((b) => refMatches(b.name, branch));
}

export function matchingTagRules(rules: ProtectionRules, tag: string): TagRule[] {
  return rules.tags.filter((t) => refMatches(t.name, tag));
}

/** ProtectedBranch.protected?: a pattern covers the branch, or the repository is empty and its default branch protected. */
export function isProtectedBranch(rules: ProtectionRules, branch: string, state: RepositoryState = { emptyRepo: false }): boolean {
  if (state.emptyRepo && rules.defaultBranchProtected) return true;
  if (branch === '') return false;
  return matchingBranchRules(rules, branch).length > 0;
}

export function isProtectedTag(rules: ProtectionRules, tag: string): boolean {
  return tag !== '' && matchingTagRules(rules, tag).length > 0;
}

/**
 * Project#protected_for?: whether jobs on a ref get protected variables and protected runners.
 * A branch of a repository that has commits is protected only by a pattern.
 */
export function isProtectedRef(rules: ProtectionRules, ref: string, tag: boolean): boolean {
  return tag ? isProtectedTag(rules, ref) : isProtectedBranch(rules, ref);
}

/**
 * ProtectedRefAccess#check_access for one role-based level: "No one" admits nobody, not even an
 * administrator (ProtectedBranchAccess, ProtectedTag::CreateAccessLevel); otherwise an
 * administrator, or someone who may push code with at least that level.
 */
export function levelAdmits(level: number, actor: RefActor | null): boolean {
  if (level === NO_ACCESS || !actor) return false;
  if (actor.admin) return true;
  return actor.canPushCode && actor.accessLevel >= level;
}

/**
 * ProtectedBranch.protected_ref_accessible_to?: Maintainers and administrators may create the
 * first branch of a protected empty repository.
 */
function branchAccessible(
  rules: ProtectionRules, actor: RefActor | null, branch: string, action: 'push' | 'merge', state: RepositoryState,
): boolean {
  if (state.emptyRepo && rules.defaultBranchProtected && actor && (actor.admin || actor.accessLevel > 30)) return true;
  return matchingBranchRules(rules, branch).some((b) => b[action].some((level) => levelAdmits(level, actor)));
}

/** UserAccess#can_push_to_branch?: push_code, and a protecting pattern's push level when one covers the branch. */
export function canPushToBranch(
  rules: ProtectionRules, actor: RefActor | null, branch: string, state: RepositoryState = { emptyRepo: false },
): boolean {
  if (!actor?.canPushCode) return false;
  if (!isProtectedBranch(rules, branch, state)) return true;
  return branchAccessible(rules, actor, branch, 'push', state);
}

/** UserAccess#can_merge_to_branch?: what a merge request's merge asks of its target branch. */
export function canMergeToBranch(
  rules: ProtectionRules, actor: RefActor | null, branch: string, state: RepositoryState = { emptyRepo: false },
): boolean {
  if (!actor) return false;
  if (!isProtectedBranch(rules, branch, state)) return actor.canPushCode;
  return branchAccessible(rules, actor, branch, 'merge', state);
}

/** ProtectedBranch.allow_force_push?: some protecting pattern allows force pushes (to those who may push). */
export function branchAllowsForcePush(rules: ProtectionRules, branch: string): boolean {
  return matchingBranchRules(rules, branch).some((b) => b.allowForcePush);
}

/** Whether `actor` may rewrite the branch's history: push access, and force pushes allowed where the branch is protected. */
export function canForcePushToBranch(rules: ProtectionRules, actor: RefActor | null, branch: string): boolean {
  if (!canPushToBranch(rules, actor, branch)) return false;
  return !isProtectedBranch(rules, branch) || branchAllowsForcePush(rules, branch);
}

/** UserAccess#can_delete_branch?: a protected branch is the Maintainer's (push_to_delete_protected_branch). */
export function canDeleteBranch(rules: ProtectionRules, actor: RefActor | null, branch: string): boolean {
  if (!actor) return false;
  if (!isProtectedBranch(rules, branch)) return actor.canPushCode;
  return actor.admin || (actor.canPushCode && actor.accessLevel >= 40);
}

/** UserAccess#can_create_tag?: a protecting pattern's create level, else admin_tag (Developer, as push_code). */
export function canCreateTag(rules: ProtectionRules, actor: RefActor | null, tag: string): boolean {
  if (!actor) return false;
  if (!isProtectedTag(rules, tag)) return actor.canPushCode;
  return matchingTagRules(rules, tag).some((t) => t.create.some((level) => levelAdmits(level, actor)));
}

/** A protected tag is never deleted by a push or the API in CE 15.2 (TagCheck: "Protected tags cannot be deleted."). */
export function canDeleteTag(rules: ProtectionRules, actor: RefActor | null, tag: string): boolean {
  return !isProtectedTag(rules, tag) && Boolean(actor?.canPushCode);
}

export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** One ref change of a push or of an API write, and what the check may need to know of it. */
export interface RefChange {
  /** The full ref name, `refs/heads/…` or `refs/tags/…`; other refs are not checked here. */
  ref: string;
  oldrev: string;
  newrev: string;
  /**
   * 'web' for writes kiln makes itself (the API), as the Service's Gitaly calls carry; 'http' for
   * a git client's push. Protected branches are created by merge-only users and deleted by
   * Maintainers only from the web.
   */
  protocol: 'web' | 'http';
  defaultBranch: string | null;
  /** Gitlab::Checks::ForcePush: the old commit is not an ancestor of the new one. Asked only when it matters. */
  forced: () => Promise<boolean>;
  /** Some protected branch already contains the new commit. Asked only when it matters. */
  newCommitOnProtectedBranch: () => Promise<boolean>;
  /** The text the Service prints when nobody may push the first branch (`A default branch … does not yet exist`). */
  emptyRepoMessage: string;
}

/**
 * The pre-receive decision for one change (Gitlab::Checks::BranchCheck and TagCheck, 15.2): null
 * when allowed, else the message the push or the API write is refused with.
 */
export async function refChangeRefusal(
  rules: ProtectionRules, actor: RefActor | null, state: RepositoryState, change: RefChange,
): Promise<string | null> {
  const creation = change.oldrev === ZERO_SHA;
  const deletion = change.newrev === ZERO_SHA;
  if (change.ref.startsWith('refs/heads/')) {
    const branch = change.ref.slice('refs/heads/'.length);
    if (deletion && branch === change.defaultBranch) return BRANCH_MESSAGES.deleteDefaultBranch;
    if (!isProtectedBranch(rules, branch, state)) return null;
    if (!creation && !deletion && !branchAllowsForcePush(rules, branch) && await change.forced()) {
      return BRANCH_MESSAGES.forcePushProtectedBranch;
    }
    if (!state.emptyRepo && creation) {
      if (canPushToBranch(rules, actor, branch, state)) return null;
      if (!canMergeToBranch(rules, actor, branch, state)) return BRANCH_MESSAGES.createProtectedBranch;
      if (!await change.newCommitOnProtectedBranch()) return BRANCH_MESSAGES.invalidCommitCreateProtectedBranch;
      return change.protocol === 'web' ? null : BRANCH_MESSAGES.nonWebCreateProtectedBranch;
    }
    if (!state.emptyRepo && deletion) {
      if (!canDeleteBranch(rules, actor, branch)) return BRANCH_MESSAGES.nonMasterDeleteProtectedBranch;
      return change.protocol === 'web' ? null : BRANCH_MESSAGES.nonWebDeleteProtectedBranch;
    }
    // Without merge requests in kiln a push never lands one, so it is a push (not a merge) check.
    if (canPushToBranch(rules, actor, branch, state)) return null;
    return state.emptyRepo ? change.emptyRepoMessage : BRANCH_MESSAGES.pushProtectedBranch;
  }
  if (change.ref.startsWith('refs/tags/')) {
    const tag = change.ref.slice('refs/tags/'.length);
    if (!isProtectedTag(rules, tag)) return null;
    if (!creation && !deletion) return TAG_MESSAGES.updateProtectedTag;
    if (deletion) return TAG_MESSAGES.deleteProtectedTag;
    return canCreateTag(rules, actor, tag) ? null : TAG_MESSAGES.createProtectedTag;
  }
  return null;
}

/** BranchCheck#empty_project_push_message. */
export function emptyRepoPushMessage(fullPath: string, membersUrl: string): string {
  return `\nA default branch (e.g. main) does not yet exist for ${fullPath}\n`
    + `Ask a project Owner or Maintainer to create a default branch:\n\n  ${membersUrl}\n\n`;
}
