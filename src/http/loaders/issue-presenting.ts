/**
 * Presenting issues of any projects for the viewer of a request: the project paths they need are
 * read for the page at once (issues.ts issueProjectPaths), references are relative to `from`.
 */
import type { FastifyRequest } from 'fastify';
import type { SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.ts';
import { ISSUE_LIST_COLUMNS, presentIssues, type Issue, type IssueListRow, type ReferenceContext } from '../entities/issue.ts';
import { issueProjectPaths } from './issues.ts';
import { ShapedList } from '../lists/pagination.ts';
import type { IssuesFrom } from '../../domain/issues/issues.finder.ts';
import type { ProjectRef } from '../../domain/issues/issue-reference.ts';

/**
 * Every issue list's page (project, group, instance, milestone, search): its statements compiled
 * once per filter shape (issues.finder.ts issuesShape, filterIssues, orderIssues).
 */
export const issuesList = new ShapedList('issues', {
  from: (db) => db.selectFrom('issues'),
  select: (qb: IssuesFrom) => qb.select(ISSUE_LIST_COLUMNS) as unknown as SelectQueryBuilder<DB, 'issues', IssueListRow>,
  id: 'issues.id',
});

export async function presentIssuesFor(
  request: FastifyRequest, rows: readonly IssueListRow[], from: ReferenceContext, o: { includeSubscribed?: boolean } = {},
): Promise<Issue[]> {
  const db = request.server.kiln.db;
  const projects = await issueProjectPaths(db, rows.map((r) => r.project_id));
  return presentIssues(db, rows, {
    externalUrl: request.server.kiln.config.externalUrl, projects, viewerId: request.caller?.user.id ?? null, from,
    ...(o.includeSubscribed ? { includeSubscribed: true } : {}),
  });
}

/** The projects' references bases (id, namespace, paths), by project id. */
export async function projectRefs(request: FastifyRequest, projectIds: readonly number[]): Promise<Map<number, ProjectRef>> {
  const paths = await issueProjectPaths(request.server.kiln.db, projectIds);
  return new Map([...paths].map(([id, p]) => [id, { id, namespaceId: p.namespaceId, path: p.path, fullPath: p.fullPath }]));
}
