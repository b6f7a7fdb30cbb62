/**
 * Protected branches and tags of a project (issue 30, item 3): loading a project's rules for the
 * decisions of ref-rules.ts, protecting and unprotecting (ProtectedBranches::CreateService,
 * ProtectedTags::CreateService, their DestroyServices) and protecting the default branch when it
 * first comes to be (Projects::ProtectDefaultBranchService).
 *
 * The functions other areas call:
 * - protectionRulesFor(db, projectId) → ProtectionRules, then the pure decisions of ref-rules.ts:
 *   canPushToBranch, canForcePushToBranch, canMergeToBranch, canDeleteBranch, canCreateTag,
 *   canDeleteTag, isProtectedRef, refChangeRefusal (the pre-receive checks for one ref change);
 * - refActorFor(actor, project) → the RefActor those decisions take;
 * - isProtectedRefOf(db, projectId, ref, tag): whether jobs on the ref are protected (CI);
 * - apiRefChangeRefusal(db, …): the pre-receive check of a ref change the API makes;
 * - protectDefaultBranch(db, project): after the default branch is created.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { ProtectedBranchRow, ProtectedTagRow } from '../../db/tables/protected-refs.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { getSetting } from '../settings/settings.ts';
import type { Actor } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';
import { defaultBranchLevels, defaultBranchProtected } from './access-levels.ts';
import { runGit } from '../repositories/git-command.ts';
import {
  isProtectedBranch, isProtectedRef, refChangeRefusal, type ProtectionRules, type RefActor,
} from './ref-rules.ts';
import {
  allProtectedBranches, allProtectedTags, branchAccessLevels, findProtectedBranch, insertProtectedBranch, insertProtectedTag,
  tagCreateAccessLevels,
} from './protected-refs.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A project's protected branches and tags with their levels, and the default_branch_protection setting's effect. */
export async function protectionRulesFor(db: Db, projectId: number): Promise<ProtectionRules> {
  const [branches, tags, protection] = await Promise.all([
    allProtectedBranches(db, projectId), allProtectedTags(db, projectId), getSetting(db, 'default_branch_protection'),
  ]);
  const [branchLevels, tagLevels] = await Promise.all([
    branchAccessLevels(db, branches.map((b) => b.id)), tagCreateAccessLevels(db, tags.map((t) => t.id)),
  ]);
  return {
    branches: branches.map((b) => ({
      name: b.name, allowForcePush: b.allow_force_push === 1,
      push: branchLevels.filter((l) => l.protected_branch_id === b.id && l.action === 'push').map((l) => l.access_level),
      merge: branchLevels.filter((l) => l.protected_branch_id === b.id && l.action === 'merge').map((l) => l.access_level),
    })),
    tags: tags.map((t) => ({ name: t.name, create: tagLevels.filter((l) => l.protected_tag_id === t.id).map((l) => l.access_level) })),
    defaultBranchProtected: defaultBranchProtected(protection),
  };
}

/** The person a decision is about, from the project policy's actor; null when nobody is signed in. */
export function refActorFor(actor: Actor, project: ProjectSubject): RefActor | null {
  if (!actor.user) return null;
  return { admin: Boolean(actor.user.admin), accessLevel: actor.accessLevel, canPushCode: canOnProject(actor, 'push_code', project) };
}

/** Project#protected_for?: jobs on this ref get protected variables and run on protected runners. */
export async function isProtectedRefOf(db: Db, projectId: number, ref: string, tag: boolean): Promise<boolean> {
  return isProtectedRef(await protectionRulesFor(db, projectId), ref, tag);
}

export type ProtectResult<T> = { ok: true; value: T } | { ok: false; reason: 'exists' | 'blank' };

/** ProtectedBranches::CreateService (the API has checked the caller and the levels). */
export async function protectBranch(db: Kysely<DB>, projectId: number, o: {
  name: string; push: number; merge: number; allowForcePush: boolean;
}): Promise<ProtectResult<ProtectedBranchRow>> {
  if (o.name.trim() === '') return { ok: false, reason: 'blank' };
  try {
    const row = await db.transaction().execute((trx) => insertProtectedBranch(trx, { projectId, ...o, now: nowIso() }));
    return { ok: true, value: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'exists' };
    throw err;
  }
}

/** ProtectedTags::CreateService. */
export async function protectTag(
  db: Kysely<DB>, projectId: number, o: { name: string; create: number },
): Promise<ProtectResult<ProtectedTagRow>> {
  if (o.name.trim() === '') return { ok: false, reason: 'blank' };
  try {
    const row = await db.transaction().execute((trx) => insertProtectedTag(trx, { projectId, ...o, now: nowIso() }));
    return { ok: true, value: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'exists' };
    throw err;
  }
}

/**
 * Projects::ProtectDefaultBranchService, run when the default branch is created (the first push,
 * a project initialised with a README, a first commit through the API): protects it with the
 * levels of the default_branch_protection setting unless the setting is 0 or a pattern already
 * covers it. Two first pushes at once cannot protect it twice (the unique index).
 */
export async function protectDefaultBranch(db: Kysely<DB>, project: Pick<ProjectRow, 'id' | 'default_branch'>): Promise<void> {
  const branch = project.default_branch;
  if (!branch) return;
  const levels = defaultBranchLevels(await getSetting(db, 'default_branch_protection'));
  if (!levels) return;
  const rules = await protectionRulesFor(db, project.id);
  if (isProtectedBranch(rules, branch) || await findProtectedBranch(db, project.id, branch)) return;
  await protectBranch(db, project.id, { name: branch, push: levels.push, merge: levels.merge, allowForcePush: false });
}

/**
 * The pre-receive check of a ref change kiln makes itself through the API (branches, tags,
 * commits), as the Service's Gitaly operations run it with the protocol `web`: null when allowed,
 * else the refusal's message. `oldrev`/`newrev` are ZERO_SHA for a created/deleted ref.
 */
export async function apiRefChangeRefusal(db: Db, o: {
  projectId: number; gitDir: string; actor: RefActor | null; emptyRepo: boolean; defaultBranch: string | null;
  ref: string; oldrev: string; newrev: string;
}): Promise<string | null> {
  const rules = await protectionRulesFor(db, o.projectId);
  return refChangeRefusal(rules, o.actor, { emptyRepo: o.emptyRepo }, {
    ref: o.ref, oldrev: o.oldrev, newrev: o.newrev, protocol: 'web', defaultBranch: o.defaultBranch, emptyRepoMessage: '',
    forced: async () => (await runGit(['rev-list', '--max-count=1', o.oldrev, `^${o.newrev}`], { gitDir: o.gitDir })).stdout.trim() !== '',
    newCommitOnProtectedBranch: async () => (await runGit(
      ['for-each-ref', '--contains', o.newrev, '--format=%(refname:strip=2)', 'refs/heads/'], { gitDir: o.gitDir },
    )).stdout.split('\n').some((b) => b !== '' && isProtectedBranch(rules, b)),
  });
}
