/**
 * What a user follows across projects: events, todos, search and Markdown rendering.
 *
 * Every path of the area and its guard: `npm run routes -- activity`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import events from './events.ts';

export default async function activityArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'activity', {
    'events': events,                  // /events, /users/:id/events, /projects/:id/events
  });
}
