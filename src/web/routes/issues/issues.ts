/**
 * A project's issue pages at the Service's addresses (issue 33): `/-/issues` (the list),
 * `/-/issues/new`, `/-/issues/<iid>` (the API's web_url of an issue) and the forms behind them —
 * POST `/-/issues` (open one), `/-/issues/<iid>/notes` (comment or reply), `/-/issues/<iid>/close`
 * and `/reopen`. Reading takes read_issue, as the API's issue routes; a project whose issues the
 * viewer may not read answers the 404 page.
 */
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { issuesPath } from '../../issue-view.ts';
import { issueListBody, listIssues, readListQuery } from './issue-list.ts';
import { changeIssueState, commentOnIssue, showIssuePage } from './issue-show.ts';
import { createIssueFromForm, newIssuePage } from './issue-new.ts';

async function listPage(p: ProjectPageRequest) {
  const { project, actor, fullPath } = p.project;
  const q = readListQuery(p.request.query as Record<string, unknown>);
  const base = issuesPath(fullPath);
  const listed = await listIssues(p.ctx.db, p.ctx.config.externalUrl, p.session?.user ?? null, {
    project: {
      id: project.id, canRead: true, canReadConfidential: canOnProject(actor, 'read_confidential_issues', project),
    },
  }, { project: project.id }, q);
  return p.render({
    title: 'Issues', active: 'issues',
    body: issueListBody(base, q, listed, {
      showReference: false, newIssueHref: p.signedIn && p.project.can('create_issue') ? `${base}/new` : undefined,
    }),
  });
}

const issues: WebArea = (web) => {
  web.project('GET', 'issues', async (p) => {
    if (!p.project.can('read_issue')) throw pageError(404);
    if (p.rest.length === 0) return listPage(p);
    if (p.rest.length === 1 && p.rest[0] === 'new') return newIssuePage(p);
    if (p.rest.length === 1) return showIssuePage(p, web.markdown);
    throw pageError(404);
  });

  web.project('POST', 'issues', async (p) => {
    if (!p.project.can('read_issue')) throw pageError(404);
    if (p.rest.length === 0) return createIssueFromForm(p);
    const action = p.rest[1];
    if (p.rest.length !== 2) throw pageError(404);
    if (action === 'notes') return commentOnIssue(p, web.markdown);
    if (action === 'close' || action === 'reopen') return changeIssueState(p, action);
    throw pageError(404);
  });
};

export default issues;
