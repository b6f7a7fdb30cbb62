/**
 * Issues and how they are planned: issues (project, group and instance lists), their links, time
 * tracking and resource events; labels, milestones and issue boards of projects and groups.
 *
 * Every path of the area and its guard: `npm run routes -- issues`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import issues from './issues.ts';
import issueLists from './issue-lists.ts';
import issueStatistics from './issue-statistics.ts';

export default async function issuesArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'issues', {
    'issues': issues,                       // /projects/:id/issues[/:issue_iid], /issues/:id
    'issue-lists': issueLists,              // /projects/:id/issues, /groups/:id/issues, /issues, …/milestones/:milestone_id/issues
    'issue-statistics': issueStatistics,    // /issues_statistics, /groups/:id/issues_statistics, /projects/:id/issues_statistics
  });
}
