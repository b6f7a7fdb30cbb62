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
import commitChanges from './commit-changes.ts';
import commitPicks from './commit-picks.ts';
import commitStatuses from './commit-statuses.ts';
import compare from './compare.ts';
import archive from './archive.ts';
import blobs from './blobs.ts';
import contributors from './contributors.ts';
import languages from './languages.ts';
import changelog from './changelog.ts';
import protectedRefs from './protected-refs.ts';

export default async function repositoryArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'repository', {
    'branches': branches,              // /projects/:id/repository/branches
    'tags': tags,                      // /projects/:id/repository/tags
    'commits': commits,                // /projects/:id/repository/commits
    'files': files,                    // /projects/:id/repository/files/:file_path[/raw|/blame]
    'tree': tree,                      // /projects/:id/repository/tree
    'commit-comments': commitComments, // /projects/:id/repository/commits/:sha/comments
    'commit-changes': commitChanges,   // /projects/:id/repository/commits/:sha/diff|refs|signature
    'commit-picks': commitPicks,       // /projects/:id/repository/commits/:sha/cherry_pick|revert
    'commit-statuses': commitStatuses, // /projects/:id/repository/commits/:sha/statuses, /projects/:id/statuses/:sha
    'compare': compare,                // /projects/:id/repository/compare, …/merge_base
    'archive': archive,                // /projects/:id/repository/archive[.format], /projects/:id/snapshot
    'blobs': blobs,                    // /projects/:id/repository/blobs/:sha[/raw]
    'contributors': contributors,      // /projects/:id/repository/contributors
    'languages': languages,            // /projects/:id/languages
    'changelog': changelog,            // /projects/:id/repository/changelog (GET, POST)
    'protected-refs': protectedRefs,   // /projects/:id/protected_branches, /projects/:id/protected_tags
  });
}
