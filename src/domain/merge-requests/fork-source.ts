/**
 * Merge requests whose source branch lives in another repository of the fork network (a fork
 * into its upstream, or between any two projects of one network), as the Service 15.2 keeps
 * them: every git operation of the request runs in the TARGET repository, where the source
 * branch's head is fetched to refs/merge-requests/:iid/head (MergeRequests::RefreshService and
 * MergeRequest#fetch_ref!, on creation and after each push to the source branch). So diffs,
 * commits, versions, the merge-tree check and the merge itself read only the target's objects,
 * and the request stays readable after the fork or its branch is gone.
 *
 * The fork network (ForkNetwork of the Service) is kept in its own rows (forks.queries.ts), so
 * it stays one when the project at its top is deleted.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import type { StorageShard } from '../../config/schema.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { protectionRulesFor, refActorFor } from '../protected-refs/protected-refs.ts';
import {
  canMergeToBranch, canPushToBranch, isProtectedBranch, type ProtectionRules, type RefActor,
} from '../protected-refs/ref-rules.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';
import { collaborationFactsOf, collaborationRequestsFrom } from './merge-requests.queries.ts';
import { refMatches } from '../protected-refs/ref-matcher.ts';
import { runGit } from '../repositories/git-command.ts';
import { refTarget } from '../repositories/git-read.ts';
import { projectRepository, updateRefs } from '../repositories/project-repository.ts';
import { COMMIT_ID, validRefName, ZERO_ID } from '../repositories/ref-names.ts';
import { findForkRow, inOneForkNetwork } from '../forks/forks.queries.ts';

type RequestRef = Pick<MergeRequestRow, 'iid' | 'project_id' | 'source_project_id' | 'source_branch'>;

/** MergeRequest#for_fork?: the source is another project (or was: a deleted fork leaves null). */
export function isForkRequest(mr: Pick<MergeRequestRow, 'project_id' | 'source_project_id'>): boolean {
  return mr.source_project_id !== mr.project_id;
}

/** The request's head ref in the target repository (MergeRequest#ref_path). */
export function requestHeadRef(iid: number): string {
  return `refs/merge-requests/${iid}/head`;
}

/**
 * Where the target repository reads the request's source head: its own branch for a request
 * inside one project, the fetched head ref for a fork's.
 */
export function sourceRefOf(mr: RequestRef): string {
  return isForkRequest(mr) ? requestHeadRef(mr.iid) : `refs/heads/${mr.source_branch}`;
}

/**
 * Project#in_fork_network_of?: both are members of one fork network (fork_network_members),
 * which outlives the projects the forks were made from: two forks of a deleted root still are.
 */
export async function inSameForkNetwork(db: Kysely<DB>, a: number, b: number): Promise<boolean> {
  return a === b || inOneForkNetwork(db, a, b);
}

/**
 * Project#default_merge_request_target of the Service 15.2: a fork's requests go to the project
 * it was forked from, unless the fork asks to target itself (mr_default_target_self) or its
 * fork is more private than its upstream (Project#mr_can_target_upstream?: a private fork of a
 * public project targets itself).
 */
export async function defaultMergeRequestTarget(db: Kysely<DB>, project: ProjectRow): Promise<ProjectRow> {
  if (project.mr_default_target_self === 1) return project;
  const fork = await findForkRow(db, project.id);
  if (!fork?.forked_from_project_id) return project;
  const upstream = await findProjectById(db, fork.forked_from_project_id);
  if (!upstream || upstream.pending_delete === 1) return project;
  if (upstream.visibility_level > project.visibility_level) return project;
  return upstream;
}

/** Copies the objects `sha` reaches from `fromGitDir` into `gitDir` (nothing when it has them). */
export async function fetchCommit(gitDir: string, fromGitDir: string, sha: string): Promise<void> {
  if (!COMMIT_ID.test(sha)) throw new Error('not a commit id');
  const { exitCode } = await runGit(['cat-file', '-e', `${sha}^{commit}`], { gitDir, okExitCodes: [1, 128] });
  if (exitCode === 0) return;
  // The head may have moved on since it was read: asking for the id itself (not the branch)
  // fetches exactly what the caller saw, which the local upload-pack serves when allowed to.
  await runGit(['-c', 'uploadpack.allowAnySHA1InWant=true', 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head',
    '--end-of-options', fromGitDir, sha], { gitDir });
}

/**
 * Brings a fork request's head ref in the target repository to the source branch's head in the
 * source repository (fetch first, then the ref through updateRefs). Answers the head now in the
 * target, or null when the source project or branch is gone (the ref then stays as it was, so
 * the request keeps its last state readable).
 */
export async function syncForkSourceHead(
  db: Kysely<DB>, shards: StorageShard[], mr: RequestRef, target: ProjectRow,
): Promise<string | null> {
  if (!isForkRequest(mr) || mr.source_project_id === null || !validRefName(mr.source_branch)) return null;
  const source = await findProjectById(db, mr.source_project_id);
  if (!source || source.pending_delete === 1) return null;
  const sourceDir = projectRepository(shards, source).gitDir;
  const head = await refTarget(sourceDir, `refs/heads/${mr.source_branch}`);
  if (!head) return null;
  const repo = projectRepository(shards, target);
  const ref = requestHeadRef(mr.iid);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const before = (await refTarget(repo.gitDir, ref)) ?? ZERO_ID;
    if (before === head) return head;
    await fetchCommit(repo.gitDir, sourceDir, head);
    const moved = await updateRefs(db, repo, [{ ref, before, after: head }]);
    if (moved.ok) return head;
    if (moved.reason !== 'stale') return null;
  }
  return (await refTarget(repo.gitDir, ref)) === head ? head : null;
}

/** `user` on `project`, with its protection rules, as a ref decision sees them. */
async function refActorOn(db: Kysely<DB>, user: UserRow, project: ProjectRow) {
  const paths = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
  const actor = await projectActor(db, user, project.id, paths?.lineage ?? [project.namespace_id]);
  return { actor, refActor: refActorFor(actor, project), rules: await protectionRulesFor(db, project.id) };
}

/**
 * MergeRequest#collaborative_push_possible? of the Service 15.2: a fork's request into another
 * project, neither of them private, whose source branch is not protected in the fork.
 */
export async function collaborativePushPossible(
  db: Kysely<DB>, mr: RequestRef, source: ProjectRow | undefined, target: ProjectRow | undefined,
): Promise<boolean> {
  if (!isForkRequest(mr) || !source || !target) return false;
  if (source.visibility_level === 0 || target.visibility_level === 0) return false;
  return !isProtectedBranch(await protectionRulesFor(db, source.id), mr.source_branch);
}

/** A project's protection rules and `user` as they judge them, remembered for one decision. */
type RefJudge = Awaited<ReturnType<typeof refActorOn>>;

/**
 * Project#fetch_branch_allows_collaboration of the Service 15.2: the source branches of
 * `project`'s open requests into other projects that allow collaboration (the stored choice:
 * merge_requests_allowing_collaboration reads the column) and that `user` may merge in their
 * target (MergeRequest#can_be_merged_by? with skip_collaboration_check: UserAccess#can_update_branch?,
 * pushing to or merging into the target branch). None for an empty repository. `branch` asks
 * about that branch only.
 */
export async function collaborationBranches(
  db: Kysely<DB>, user: UserRow | null, project: ProjectRow, branch?: string,
): Promise<string[]> {
  if (!user || project.empty_repo === 1) return [];
  const found = new Set<string>();
  const judges = new Map<number, { target: ProjectRow; judge: RefJudge } | null>();
  for (const mr of await collaborationRequestsFrom(db, project.id, branch)) {
    if (found.has(mr.source_branch)) continue;
    if (!judges.has(mr.project_id)) {
      const target = await findProjectById(db, mr.project_id);
      judges.set(mr.project_id, target && target.pending_delete !== 1 ? { target, judge: await refActorOn(db, user, target) } : null);
    }
    const j = judges.get(mr.project_id);
    if (!j) continue;
    const state = { emptyRepo: j.target.empty_repo === 1 };
    if (canPushToBranch(j.judge.rules, j.judge.refActor, mr.target_branch, state)
      || canMergeToBranch(j.judge.rules, j.judge.refActor, mr.target_branch, state)) found.add(mr.source_branch);
  }
  return [...found];
}

/**
 * Gitlab::UserAccess#can_push_to_branch? of the Service 15.2 on `project`: push_code and the
 * branch's protection, or, for someone without push_code, a branch an open request allows
 * collaboration on (can_collaborate?). A protected branch stays closed to a collaborator, as the
 * protection's levels ask for push_code (ProtectedRefAccess#check_access), and an internal
 * project has no collaboration path at all (UserAccess#branch_allows_collaboration_for? leaves
 * internal projects out).
 */
export async function canPushToBranchOf(
  db: Kysely<DB>, user: UserRow | null, project: ProjectRow, branch: string, judge?: { refActor: RefActor | null; rules: ProtectionRules },
): Promise<boolean> {
  if (!user) return false;
  const { refActor, rules } = judge ?? await refActorOn(db, user, project);
  const state = { emptyRepo: project.empty_repo === 1 };
  if (canPushToBranch(rules, refActor, branch, state)) return true;
  if (refActor?.canPushCode || project.visibility_level === VISIBILITY_LEVELS.internal) return false;
  if (isProtectedBranch(rules, branch, state)) return false;
  return (await collaborationBranches(db, user, project, branch)).length > 0;
}

/**
 * Whether `user` may push to the request's source branch in its source project (the API's
 * authorize_push_to_merge_request!: UserAccess#can_push_to_branch? on the source project), as a
 * pusher of the fork or as a merger of the target of a request that allows collaboration.
 */
export async function canPushToSourceBranch(db: Kysely<DB>, user: UserRow, mr: RequestRef): Promise<boolean> {
  if (mr.source_project_id === null) return false;
  const source = await findProjectById(db, mr.source_project_id);
  if (!source || source.pending_delete === 1 || source.archived === 1) return false;
  return canPushToBranchOf(db, user, source, mr.source_branch);
}

/**
 * MergeRequest#allow_collaboration of the Service 15.2, what the entity shows, for a page of
 * requests: the ids of those whose stored choice holds because a collaborative push is possible
 * at all (collaborativePushPossible: neither project private, the source branch unprotected in
 * the fork). One statement for the page, none when no row chose it (issue 33: a list asked for
 * each row that did).
 */
export async function collaboratingRequestIds(
  db: Kysely<DB>, rows: readonly (RequestRef & Pick<MergeRequestRow, 'id' | 'allow_collaboration'>)[],
): Promise<Set<number>> {
  const chose = rows.filter((r) => r.allow_collaboration === 1 && isForkRequest(r) && r.source_project_id !== null);
  const out = new Set<number>();
  if (chose.length === 0) return out;
  const sources = [...new Set(chose.map((r) => r.source_project_id!))];
  const projects = new Map<number, { visibility: number; protectedBranches: string[] }>();
  for (const f of await collaborationFactsOf(db, [...new Set([...sources, ...chose.map((r) => r.project_id)])], sources)) {
    const p = projects.get(f.id) ?? { visibility: f.visibility_level, protectedBranches: [] };
    if (f.protected_branch !== null) p.protectedBranches.push(f.protected_branch);
    projects.set(f.id, p);
  }
  for (const r of chose) {
    const source = projects.get(r.source_project_id!);
    const target = projects.get(r.project_id);
    if (!source || !target || source.visibility === 0 || target.visibility === 0) continue;
    // ProtectedBranch.protected? of a repository with commits: a pattern covers the branch.
    if (!source.protectedBranches.some((pattern) => refMatches(pattern, r.source_branch))) out.add(r.id);
  }
  return out;
}

/** `user`'s create_pipeline on `project` (update_build: Developer and up, as Ci::CreatePipelineService's ability check asks). */
export async function mayCreatePipelineIn(db: Kysely<DB>, user: UserRow, project: ProjectRow): Promise<boolean> {
  return canOnProject((await refActorOn(db, user, project)).actor, 'update_build', project);
}

/**
 * MergeRequests::CreatePipelineService#can_create_pipeline_in_target_project? of the Service 15.2,
 * for a fork's request: create_pipeline in the target, and UserAccess#can_update_branch? there of
 * the source branch's full ref name (MergeRequest#source_branch_ref, `refs/heads/<branch>`, which
 * only a wildcard protection pattern covers): in effect, the target's Developers and up.
 */
export async function canCreatePipelineInTarget(db: Kysely<DB>, user: UserRow, target: ProjectRow, sourceBranch: string): Promise<boolean> {
  const { actor, refActor, rules } = await refActorOn(db, user, target);
  if (!canOnProject(actor, 'update_build', target)) return false;
  const ref = `refs/heads/${sourceBranch}`;
  const state = { emptyRepo: target.empty_repo === 1 };
  return canPushToBranch(rules, refActor, ref, state) || canMergeToBranch(rules, refActor, ref, state);
}

/**
 * MergeRequest#can_allow_collaboration?: a fork's request where a collaborative push is possible,
 * set by someone who may push to the fork.
 */
export async function canAllowCollaboration(db: Kysely<DB>, user: UserRow, mr: RequestRef): Promise<boolean> {
  if (!isForkRequest(mr) || mr.source_project_id === null) return false;
  const source = await findProjectById(db, mr.source_project_id);
  if (!source) return false;
  const own = await refActorOn(db, user, source);
  if (!canOnProject(own.actor, 'push_code', source)) return false;
  return collaborativePushPossible(db, mr, source, await findProjectById(db, mr.project_id));
}

/**
 * MergeRequest#can_remove_source_branch? for a fork's request: push_code in the source project,
 * the branch neither protected there nor its default branch, and still at the merged head.
 */
export async function removeForkSourceBranch(
  env: { db: Kysely<DB>; storages: StorageShard[] }, user: UserRow, mr: RequestRef, mergedHead: string,
): Promise<{ project: ProjectRow; update: { ref: string; before: string; after: string } } | null> {
  if (mr.source_project_id === null || !validRefName(mr.source_branch)) return null;
  const source = await findProjectById(env.db, mr.source_project_id);
  if (!source || source.pending_delete === 1 || source.archived === 1 || source.default_branch === mr.source_branch) return null;
  const own = await refActorOn(env.db, user, source);
  if (!canOnProject(own.actor, 'push_code', source) || isProtectedBranch(own.rules, mr.source_branch)) return null;
  const repo = projectRepository(env.storages, source);
  const ref = `refs/heads/${mr.source_branch}`;
  if ((await refTarget(repo.gitDir, ref)) !== mergedHead) return null;
  const update = { ref, before: mergedHead, after: ZERO_ID };
  return (await updateRefs(env.db, repo, [update])).ok ? { project: source, update } : null;
}
