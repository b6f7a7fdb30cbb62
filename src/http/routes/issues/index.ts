/**
 * Issues and how they are planned: issues (project, group and instance lists), their links, time
 * tracking and resource events; labels, milestones and issue boards of projects and groups.
 *
 * Every path of the area and its guard: `npm run routes -- issues`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import boards from './boards.ts';
import labels from './labels.ts';
import milestones from './milestones.ts';

export default async function issuesArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'issues', {
    'labels': labels,                  // /projects/:id/labels[/:label_id[/promote|subscribe|unsubscribe]], /groups/:id/labels[…]
    'milestones': milestones,          // /projects/:id/milestones[/:milestone_id[/promote|merge_requests]], /groups/:id/milestones[…]
    'boards': boards,                  // /projects/:id/boards[/:board_id[/lists[/:list_id]]], /groups/:id/boards[…]
  });
}
