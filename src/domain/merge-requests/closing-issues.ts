/**
 * The issues a merge request closes on merge, kept in merge_requests_closing_issues while the
 * request is open (MergeRequest#cache_merge_request_closes_issues!: nothing for a project without
 * issues, nothing once closed or merged), and who may count them on an issue
 * (MergeRequestsClosingIssues.count_for_collection: administrators all; anyone where the merge
 * requests feature is enabled; otherwise Reporters and up of the request's project).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { projectAccessLevel } from '../members/members.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { closingIssueIids } from './merge.ts';
import { issuesByIids, mergeRequestAccessOfProjects, replaceClosingIssues } from './merge-requests.queries.ts';

/** ProjectFeature::ENABLED. */
const FEATURE_ENABLED = 20;

export async function cacheClosingIssues(
  trx: Transaction<DB>, project: { id: number; issues_access_level: number }, mr: Pick<MergeRequestRow, 'id' | 'state'>,
  description: string | null, now: string,
): Promise<void> {
  if (project.issues_access_level === 0) return;
  if (mr.state === 'closed' || mr.state === 'merged') return;
  const issues = await issuesByIids(trx, project.id, closingIssueIids(description));
  await replaceClosingIssues(trx, mr.id, issues.map((i) => i.id), now);
}

/** Of `projectIds` (those whose issues have closing requests on a page), the ones whose requests the viewer counts. */
export async function projectsCountingClosingRequests(
  db: Kysely<DB>, projectIds: readonly number[], viewerId: number | null,
): Promise<Set<number>> {
  const out = new Set<number>();
  if (projectIds.length === 0) return out;
  const projects = await mergeRequestAccessOfProjects(db, projectIds);
  const viewer = viewerId === null ? undefined : (await findUsersByIds(db, [viewerId]))[0];
  const restricted = [];
  for (const p of projects) {
    if (viewer?.admin === 1 || p.merge_requests_access_level >= FEATURE_ENABLED) out.add(p.id);
    else if (viewer) restricted.push(p);
  }
  if (restricted.length > 0 && viewer) {
    const paths = await namespacePathsById(db, [...new Set(restricted.map((p) => p.namespace_id))]);
    for (const p of restricted) {
      const level = await projectAccessLevel(db, viewer.id, p.id, paths.get(p.namespace_id)?.lineage ?? []);
      if (level >= ACCESS_LEVELS.reporter) out.add(p.id);
    }
  }
  return out;
}
