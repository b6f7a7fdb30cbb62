/**
 * Merge request pages (issue 33), at the addresses of the API's `web_url`s:
 *
 *   GET  /<project>/-/merge_requests                 list.ts (tabs, filters, sort, pages)
 *   GET  /<project>/-/merge_requests/new             new.ts; POST …/new opens one
 *   GET  /<project>/-/merge_requests/<iid>           overview.ts; POST …/<iid>/<action> actions.ts
 *   GET  /<project>/-/merge_requests/<iid>/commits   changes.ts (also /pipelines and /diffs)
 *   GET  /<group>/-/merge_requests                   list.ts, the group's projects and sub-groups'
 *
 * Reading takes read_merge_request, as GET /projects/:id/merge_requests: a project whose merge
 * requests the viewer may not read answers the same 404 page as one they may not see at all.
 */
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { requestAction } from './actions.ts';
import { commitsPage, diffsPage, pipelinesPage } from './changes.ts';
import { groupListPage, projectListPage } from './list.ts';
import { createRequest, newPage } from './new.ts';
import { overviewPage } from './overview.ts';
import { loadRequest } from './request-page.ts';

function readable(p: ProjectPageRequest): void {
  if (!canReadMergeRequest(p.project.actor, p.project.project)) throw pageError(404);
}

const TABS = { commits: commitsPage, pipelines: pipelinesPage, diffs: diffsPage } as const;

const mergeRequests: WebArea = (web) => {
  web.project('GET', 'merge_requests', async (p) => {
    readable(p);
    const [first, tab, ...more] = p.rest;
    if (first === undefined) return projectListPage(p);
    if (first === 'new' && tab === undefined) return newPage(p);
    if (more.length > 0) throw pageError(404);
    if (tab === undefined) return overviewPage(p, await loadRequest(p), web.markdown);
    if (tab === 'commits' || tab === 'pipelines' || tab === 'diffs') return TABS[tab](p);
    throw pageError(404);
  });

  web.project('POST', 'merge_requests', async (p) => {
    readable(p);
    if (p.rest.length === 1 && p.rest[0] === 'new') return createRequest(p);
    return requestAction(p, web.markdown);
  });

  web.group('GET', 'merge_requests', async (p) => {
    if (p.rest.length > 0) throw pageError(404);
    return groupListPage(p);
  });
};

export default mergeRequests;
