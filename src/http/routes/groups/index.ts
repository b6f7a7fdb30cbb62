/**
 * Groups, their hierarchy and namespaces.
 *
 * Every path of the area and its guard: `npm run routes -- groups`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import groups from './groups.ts';
import hierarchy from './hierarchy.ts';
import namespaces from './namespaces.ts';

export default async function groupsArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'groups', {
    'groups': groups,                  // /groups, /groups/:id
    'hierarchy': hierarchy,            // /groups/:id/(subgroups|descendant_groups|projects)
    'namespaces': namespaces,          // /namespaces, /namespaces/:id[/exists]
  });
}
