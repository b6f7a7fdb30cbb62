/**
 * A group's issue pages at the Service's addresses: `/groups/<group>/-/issues` (the issues of the
 * group's and its sub-groups' projects the viewer may see, as GET /groups/:id/issues lists them:
 * archived projects left out, confidential issues as the finder allows), `/groups/<group>/-/milestones`
 * and `/groups/<group>/-/milestones/<iid>` (the API's web_url of a group milestone,
 * http/entities/issue.ts milestoneOwnerUrl). A group the viewer may not read is the 404 page, as
 * the API's 404 Group Not Found (the router's group pages). `/groups/<group>` itself redirects to
 * the group's page at `/<group>` (router.ts).
 */
import { descendantGroupIds } from '../../../domain/namespaces/namespaces.queries.ts';
import { milestonesQuery } from '../../../domain/milestones/milestones.queries.ts';
import type { GroupContext } from '../../../http/loaders/containers.ts';
import { INT32_MAX } from '../../../http/input/params.ts';
import type { SafeHtml } from '../../html.ts';
import { frame } from '../../layout.ts';
import type { PageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { enc, groupPath, renderMarkdown } from '../../issue-view.ts';
import { issueListBody, listIssues, readListQuery } from './issue-list.ts';
import { milestoneIssues, milestoneListBody, milestoneListState, milestonePageBody, stateFilter } from './milestone-view.ts';

const MAX_MILESTONES = 200;

async function groupAndDescendants(p: PageRequest, group: GroupContext): Promise<number[]> {
  return [group.group.id, ...(await descendantGroupIds(p.ctx.db, [group.group.id])).keys()];
}

function render(
  p: PageRequest, group: GroupContext, title: string, body: SafeHtml, crumbs: { text: string; href?: string }[] = [],
): SafeHtml {
  return frame({
    title, body, signedIn: p.signedIn,
    breadcrumbs: [{ text: group.fullName, href: `/${enc(group.fullPath)}` }, ...crumbs],
  });
}

const groupPages: WebArea = (web) => {
  // The router finds the group (`/<group>/-/…` or the Service's `/groups/<group>/-/…`), the same
  // 404 page for one the viewer may not read.
  web.group('GET', 'issues', async (p) => {
    if (p.rest.length > 0) throw pageError(404);
    const group = p.group;
    const q = readListQuery(p.request.query as Record<string, unknown>);
    const listed = await listIssues(p.ctx.db, p.ctx.config.externalUrl, p.session?.user ?? null,
      { namespaceIds: await groupAndDescendants(p, group) }, { group: group.group.id }, q);
    return render(p, group, 'Issues', issueListBody(`${groupPath(group.fullPath)}/-/issues`, q, listed, { showReference: true }));
  });

  web.group('GET', 'milestones', async (p) => {
    const group = p.group;
    const base = `${groupPath(group.fullPath)}/-`;
    const viewer = p.session?.user ?? null;
    const { db } = p.ctx;
    if (p.rest.length === 0) {
      const state = milestoneListState(p.request.query as Record<string, unknown>);
      const rows = await milestonesQuery(db, { projectIds: [], groupIds: [group.group.id] }, { state: stateFilter(state) })
        .limit(MAX_MILESTONES).execute();
      return render(p, group, 'Milestones', milestoneListBody(`${base}/milestones`, state, rows, (m) => `${base}/milestones/${m.iid}`, () => ''));
    }
    const raw = p.rest[0]!;
    if (p.rest.length !== 1 || !/^\d{1,10}$/.test(raw) || Number(raw) > INT32_MAX) throw pageError(404);
    const milestone = await milestonesQuery(db, { projectIds: [], groupIds: [group.group.id] }, { iids: [Number(raw)] })
      .executeTakeFirst();
    if (!milestone) throw pageError(404);
    const [description, issues] = await Promise.all([
      // A group's text has no context project: only users' references resolve (the Service's skip_project_check).
      milestone.description ? renderMarkdown(web.markdown, p.ctx, viewer, undefined, milestone.description) : Promise.resolve(null),
      milestoneIssues(db, viewer, { namespaceIds: await groupAndDescendants(p, group) }, milestone),
    ]);
    return render(p, group, milestone.title, milestonePageBody(milestone, description, issues, true),
      [{ text: 'Milestones', href: `${base}/milestones` }, { text: milestone.title }]);
  });
};

export default groupPages;
