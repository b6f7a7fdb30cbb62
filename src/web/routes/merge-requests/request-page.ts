/**
 * What every page of one merge request starts with (issue 33): the request `/-/merge_requests/<iid>`
 * names, found as the API's `:merge_request_iid` finds it (http/loaders/merge-requests.ts
 * findReadableMergeRequest: a missing request and one the viewer may not read are the same 404
 * page), the MergeRequest entity the API would answer for it, and the header with the tabs
 * Overview, Commits, Pipelines (for those who may read pipelines) and Changes.
 */
import { findReadableMergeRequest, type MergeRequestContext } from '../../../http/loaders/merge-requests.ts';
import { presentMergeRequests, type MergeRequestEntity } from '../../../http/entities/merge-request.ts';
import { contextProjectPath } from '../../../http/loaders/issues.ts';
import { canMergeMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { enc, timeTag } from '../../ci-view.ts';
import { personLink, requestPath, stateBadge } from './mr-view.ts';

export interface RequestPage extends MergeRequestContext {
  entity: MergeRequestEntity;
  /** `/<project>/-/merge_requests/<iid>`. */
  path: string;
}

/** The request of `p.rest[0]` (an iid), or the 404 page. */
export async function loadRequest(p: ProjectPageRequest): Promise<RequestPage> {
  const raw = p.rest[0];
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) throw pageError(404);
  const found = await findReadableMergeRequest(p.ctx.db, p.ctx.config.storages, p.project, Number(raw));
  if (!found) throw pageError(404);
  const { db, config } = p.ctx;
  const rules = await protectionRulesFor(db, p.project.project.id);
  const canMerge = canMergeMergeRequest(p.project.actor, p.project.project, rules, found.mr.target_branch);
  const [entity] = await presentMergeRequests(db, [found.mr], {
    externalUrl: config.externalUrl, projects: contextProjectPath(p.project), viewerId: p.session?.user.id ?? null,
    from: { project: p.project.project.id }, full: { canMerge },
  });
  return { ...found, entity: entity!, path: requestPath(p.project.fullPath, found.mr.iid) };
}

export type RequestTab = 'overview' | 'commits' | 'pipelines' | 'diffs';

/** The request's header and tabs above each of its pages. */
export function requestHeader(p: ProjectPageRequest, r: RequestPage, active: RequestTab): SafeHtml {
  const e = r.entity;
  const base = `/${enc(p.project.fullPath)}`;
  // A fork's source branch is the fork's: shown, not linked into this project.
  const branch = (name: string, here = true) => (here ? html`<a href="${base}/-/tree/${enc(name)}"><code>${name}</code></a>` : html`<code>${name}</code>`);
  const tabs: [RequestTab, string, string][] = [
    ['overview', 'Overview', r.path], ['commits', 'Commits', `${r.path}/commits`],
    ...(p.project.can('read_build') ? [['pipelines', 'Pipelines', `${r.path}/pipelines`] as [RequestTab, string, string]] : []),
    ['diffs', 'Changes', `${r.path}/diffs`],
  ];
  return html`<div class="mr-header">
<p>${stateBadge(e.state)}${e.draft ? html` <span class="badge draft">Draft</span>` : ''} <span class="muted">${e.references.short}</span>
${personLink(e.author)} requested to merge ${branch(e.source_branch, e.source_project_id === e.project_id)} into ${branch(e.target_branch)} ${timeTag(e.created_at)}</p>
</div>
<nav class="tabs" aria-label="Merge request">${tabs.map(([id, label, href]) =>
    html`<a href="${href}"${id === active ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>`;
}

/** The page of one request in the project's frame. */
export function renderRequest(p: ProjectPageRequest, r: RequestPage, active: RequestTab, body: SafeHtml): SafeHtml {
  const base = `/${enc(p.project.fullPath)}`;
  return p.render({
    title: r.entity.title, active: 'merge_requests',
    breadcrumbs: [
      { text: p.project.namespace.fullName, href: `/${enc(p.project.namespace.fullPath)}` },
      { text: p.project.project.name, href: base },
      { text: 'Merge requests', href: `${base}/-/merge_requests` },
      { text: r.entity.references.short, href: r.path },
    ],
    body: html`${requestHeader(p, r, active)}${body}`,
  });
}
