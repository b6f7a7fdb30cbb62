/**
 * The merge request variables of a pipeline (merge-request-pipelines.ts), read both while a
 * pipeline is created (what `rules:if` sees) and in its jobs' payloads: Ci::Pipeline#predefined_variables
 * for a merge request pipeline plus MergeRequest#predefined_variables (15.2: no SQUASH_ON_MERGE,
 * SOURCE_BRANCH_PROTECTED or DRAFT yet; APPROVED is a paid feature), and CI_OPEN_MERGE_REQUESTS,
 * which names at most 4 open requests of a branch pipeline's branch (MAX_OPEN_MERGE_REQUESTS_REFS).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { diffAtHead, findMergeRequestById, openMergeRequestsFromBranch, peopleOf } from '../merge-requests/merge-requests.queries.ts';
import { labelsOfTargets, milestonesByIds } from '../issues/issues.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { isProtectedRefOf } from '../protected-refs/protected-refs.ts';

export const MERGE_REQUEST_EVENT = 'merge_request_event';
const MAX_OPEN_MERGE_REQUESTS_REFS = 4;

/** refs/merge-requests/:iid/head (MergeRequest#ref_path): a detached pipeline's ref. */
export function mergeRequestRefPath(iid: number): string {
  return `refs/merge-requests/${iid}/head`;
}

async function fullPathOf(db: Kysely<DB>, project: ProjectRow): Promise<string> {
  const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
  return ns ? `${ns.fullPath}/${project.path}` : project.path;
}

/** Array#to_sentence, as assignee_username_list joins the names. */
function toSentence(words: string[]): string {
  if (words.length <= 1) return words.join('');
  if (words.length === 2) return `${words[0]} and ${words[1]}`;
  return `${words.slice(0, -1).join(', ')}, and ${words[words.length - 1]}`;
}

export interface PipelineRef {
  projectId: number;
  ref: string;
  tag: boolean;
  sha: string;
  source: string;
  mergeRequestId: number | null;
}

/**
 * The merge request variables of a pipeline, in the Service's order: CI_MERGE_REQUEST_* for a
 * merge request pipeline, then CI_OPEN_MERGE_REQUESTS for a pipeline of a branch with open requests.
 */
export async function mergeRequestVariables(db: Kysely<DB>, externalUrl: string, p: PipelineRef): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  let mr: MergeRequestRow | undefined;
  if (p.source === MERGE_REQUEST_EVENT && p.mergeRequestId !== null) mr = await findMergeRequestById(db, p.mergeRequestId);
  if (mr) {
    const target = await findProjectById(db, mr.project_id);
    const source = mr.source_project_id === null ? undefined : await findProjectById(db, mr.source_project_id);
    const targetPath = target ? await fullPathOf(db, target) : '';
    out.push(['CI_MERGE_REQUEST_EVENT_TYPE', 'detached']);
    // Only merged result pipelines carry the two heads; a detached pipeline has them empty.
    out.push(['CI_MERGE_REQUEST_SOURCE_BRANCH_SHA', '']);
    out.push(['CI_MERGE_REQUEST_TARGET_BRANCH_SHA', '']);
    const diff = await diffAtHead(db, mr.id, p.sha);
    if (diff) {
      out.push(['CI_MERGE_REQUEST_DIFF_ID', String(diff.id)]);
      if (diff.base_commit_sha) out.push(['CI_MERGE_REQUEST_DIFF_BASE_SHA', diff.base_commit_sha]);
    }
    out.push(['CI_MERGE_REQUEST_ID', String(mr.id)]);
    out.push(['CI_MERGE_REQUEST_IID', String(mr.iid)]);
    out.push(['CI_MERGE_REQUEST_REF_PATH', mergeRequestRefPath(mr.iid)]);
    out.push(['CI_MERGE_REQUEST_PROJECT_ID', String(mr.project_id)]);
    out.push(['CI_MERGE_REQUEST_PROJECT_PATH', targetPath]);
    out.push(['CI_MERGE_REQUEST_PROJECT_URL', `${externalUrl}/${targetPath}`]);
    out.push(['CI_MERGE_REQUEST_TARGET_BRANCH_NAME', mr.target_branch]);
    out.push(['CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED', String(await isProtectedRefOf(db, mr.project_id, mr.target_branch, false))]);
    out.push(['CI_MERGE_REQUEST_TITLE', mr.title]);
    const assigneeIds = (await peopleOf(db, 'merge_request_assignees', [mr.id])).get(mr.id) ?? [];
    if (assigneeIds.length > 0) {
      const users = new Map((await findUsersByIds(db, assigneeIds)).map((u) => [u.id, u.username]));
      out.push(['CI_MERGE_REQUEST_ASSIGNEES', toSentence(assigneeIds.flatMap((id) => users.get(id) ?? []))]);
    }
    if (mr.milestone_id !== null) {
      const milestone = (await milestonesByIds(db, [mr.milestone_id])).get(mr.milestone_id);
      if (milestone) out.push(['CI_MERGE_REQUEST_MILESTONE', milestone.title]);
    }
    const labels = (await labelsOfTargets(db, 'MergeRequest', [mr.id])).get(mr.id) ?? [];
    if (labels.length > 0) out.push(['CI_MERGE_REQUEST_LABELS', labels.map((l) => l.title).sort().join(',')]);
    if (source) {
      const sourcePath = await fullPathOf(db, source);
      out.push(['CI_MERGE_REQUEST_SOURCE_PROJECT_ID', String(source.id)]);
      out.push(['CI_MERGE_REQUEST_SOURCE_PROJECT_PATH', sourcePath]);
      out.push(['CI_MERGE_REQUEST_SOURCE_PROJECT_URL', `${externalUrl}/${sourcePath}`]);
      out.push(['CI_MERGE_REQUEST_SOURCE_BRANCH_NAME', mr.source_branch]);
    }
  }
  // all_merge_requests_by_recency: a merge request pipeline's own request, a branch pipeline's open ones.
  const open = mr ? (mr.state === 'opened' ? [mr] : [])
    : p.tag ? [] : await openMergeRequestsFromBranch(db, p.projectId, p.ref, MAX_OPEN_MERGE_REQUESTS_REFS);
  if (open.length > 0) {
    const refs: string[] = [];
    for (const r of open) {
      const target = await findProjectById(db, r.project_id);
      refs.push(`${target ? await fullPathOf(db, target) : ''}!${r.iid}`);
    }
    out.push(['CI_OPEN_MERGE_REQUESTS', refs.join(',')]);
  }
  return out;
}

