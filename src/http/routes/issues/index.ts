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
import issueActions from './issue-actions.ts';
import issueLinks from './issue-links.ts';
import issueMove from './issue-move.ts';
import issueTimeTracking from './issue-time-tracking.ts';
import resourceEvents from './resource-events.ts';
import boards from './boards.ts';
import labels from './labels.ts';
import milestones from './milestones.ts';

export default async function issuesArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'issues', {
    'issues': issues,                       // /projects/:id/issues[/:issue_iid], /issues/:id
    'issue-lists': issueLists,              // /projects/:id/issues, /groups/:id/issues, /issues, …/milestones/:milestone_id/issues
    'issue-statistics': issueStatistics,    // /issues_statistics, /groups/:id/issues_statistics, /projects/:id/issues_statistics
    // …/:issue_iid/{subscribe,unsubscribe,participants,closed_by,related_merge_requests,user_agent_detail,reorder}
    'issue-actions': issueActions,
    'issue-move': issueMove,                // /projects/:id/issues/:issue_iid/{move,clone}
    'issue-links': issueLinks,              // /projects/:id/issues/:issue_iid/links[/:issue_link_id]
    'issue-time-tracking': issueTimeTracking, // …/:issue_iid/{time_estimate,add_spent_time,reset_*,time_stats}
    // /projects/:id/{issues/:issue_iid,merge_requests/:merge_request_iid}/resource_{label,milestone,state}_events[/:event_id]
    'resource-events': resourceEvents,
    'labels': labels,                       // /projects/:id/labels[/:label_id[/promote|subscribe|unsubscribe]], /groups/:id/labels[…]
    'milestones': milestones,               // /projects/:id/milestones[/:milestone_id[/promote|merge_requests]], /groups/:id/milestones[…]
    'boards': boards,                       // /projects/:id/boards[/:board_id[/lists[/:list_id]]], /groups/:id/boards[…]
  });
}
