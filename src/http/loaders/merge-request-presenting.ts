/**
 * Presenting merge requests of any projects for the viewer of a request (search, milestones,
 * an issue's closing and mentioning requests): the project paths they need are read for the page
 * at once, references are relative to `from`.
 */
import type { FastifyRequest } from 'fastify';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import type { ReferenceContext } from '../entities/issue.ts';
import { presentMergeRequests, type MergeRequestEntity } from '../entities/merge-request.ts';
import { issueProjectPaths } from './issues.ts';

export async function presentMergeRequestsFor(
  request: FastifyRequest, rows: readonly MergeRequestRow[], from: ReferenceContext,
): Promise<MergeRequestEntity[]> {
  const db = request.server.kiln.db;
  const projects = await issueProjectPaths(db, rows.map((r) => r.project_id));
  return presentMergeRequests(db, rows, {
    externalUrl: request.server.kiln.config.externalUrl, projects, viewerId: request.caller?.user.id ?? null, from,
  });
}
