/**
 * What a user follows across projects: events, todos, search and Markdown rendering.
 *
 * Every path of the area and its guard: `npm run routes -- activity`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import events from './events.ts';
import markdown from './markdown.ts';
import search from './search.ts';
import todos from './todos.ts';

export default async function activityArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'activity', {
    'events': events,       // /events, /users/:id/events, /projects/:id/events
    'markdown': markdown,   // /markdown
    'search': search,       // /search, /groups/:id/(-/)search, /projects/:id/(-/)search
    'todos': todos,         // /todos, /todos/:id/mark_as_done, /todos/mark_as_done, /projects/:id/issues/:issue_iid/todo
  });
}
