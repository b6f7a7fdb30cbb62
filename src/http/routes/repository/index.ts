/**
 * A project's git repository read and written through the API (spec, Repository): branches, tags, commits, files, tree.
 *
 * Every path of the area and its guard: `npm run routes -- repository`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import branches from './branches.ts';
import tags from './tags.ts';
import commits from './commits.ts';
import files from './files.ts';
import tree from './tree.ts';
import commitComments from './commit-comments.ts';
import protectedRefs from './protected-refs.ts';

export default async function repositoryArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'repository', {
    'branches': branches,              // /projects/:id/repository/branches
    'tags': tags,                      // /projects/:id/repository/tags
    'commits': commits,                // /projects/:id/repository/commits
    'files': files,                    // /projects/:id/repository/files/:file_path[/raw|/blame]
    'tree': tree,                      // /projects/:id/repository/tree
    'commit-comments': commitComments, // /projects/:id/repository/commits/:sha/comments
    'protected-refs': protectedRefs,   // /projects/:id/protected_branches, /projects/:id/protected_tags
  });
}
