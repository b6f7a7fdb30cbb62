/**
 * A group's issue pages at the Service's addresses: `/groups/<group>/-/issues` (the issues of the
 * group's and its sub-groups' projects the viewer may see, as GET /groups/:id/issues lists them:
 * archived projects left out, confidential issues as the finder allows), `/groups/<group>/-/milestones`
 * and `/groups/<group>/-/milestones/<iid>` (the API's web_url of a group milestone,
 * http/entities/issue.ts milestoneOwnerUrl). A group the viewer may not read is the 404 page, as
 * the API's 404 Group Not Found. `/groups/<group>` itself is the group's page at `/<group>`.
 */
import { descendantGroupIds } from '../../../domain/namespaces/namespaces.queries.ts';
import { milestonesQuery } from '../../../domain/milestones/milestones.queries.ts';
import { findVisibleGroup, type GroupContext } from '../../../http/loaders/containers.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { INT32_MAX } from '../../../http/input/params.ts';
import type { SafeHtml } from '../../html.ts';
import { frame, redirect } from '../../layout.ts';
import type { PageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { enc, groupPath, renderMarkdown } from '../../issue-view.ts';
import { issueListBody, listIssues, readListQuery } from './issue-list.ts';
import { milestoneIssues, milestoneListBody, milestoneListState, milestonePageBody, stateFilter } from './milestone-view.ts';

const MAX_PATH = 2048;
const MAX_MILESTONES = 200;

/** `/groups/<a>/<b>/-/<rest…>` as the group's path and what follows the dash, or null when it names nothing. */
function parse(url: string): { group: string; rest: string[] } | null {
  const path = url.split('?', 1)[0]!;
  if (path.length > MAX_PATH * 3) return null;
  const raw = path.split('/').slice(2);
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const segments: string[] = [];
  for (const s of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(s);
    } catch {
      return null;
    }
    if (decoded === '' || decoded.length > 255 || !isStorableText(decoded) || decoded.includes('/')) return null;
    segments.push(decoded);
  }
  const dash = segments.indexOf('-');
  const owner = dash < 0 ? segments : segments.slice(0, dash);
  if (owner.length === 0) return null;
  return { group: owner.join('/'), rest: dash < 0 ? [] : ['-', ...segments.slice(dash + 1)] };
}

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
  web.page('GET', '/groups/*', async (p) => {
    const parsed = parse(p.request.url);
    if (!parsed) throw pageError(404);
    const group = await findVisibleGroup(p.ctx.db, p.session?.user ?? null, parsed.group, 'path');
    if (!group) throw pageError(404);
    const [dash, segment, ...rest] = parsed.rest;
    if (dash === undefined) return redirect(p.reply, 'GET', `/${enc(group.fullPath)}`);
    const base = `${groupPath(group.fullPath)}/-`;
    const viewer = p.session?.user ?? null;
    const { db, config } = p.ctx;

    if (segment === 'issues' && rest.length === 0) {
      const q = readListQuery(p.request.query as Record<string, unknown>);
      const listed = await listIssues(db, config.externalUrl, viewer, { namespaceIds: await groupAndDescendants(p, group) },
        { group: group.group.id }, q);
      return render(p, group, 'Issues', issueListBody(`${base}/issues`, q, listed, { showReference: true }));
    }

    if (segment === 'milestones' && rest.length === 0) {
      const state = milestoneListState(p.request.query as Record<string, unknown>);
      const rows = await milestonesQuery(db, { projectIds: [], groupIds: [group.group.id] }, { state: stateFilter(state) })
        .limit(MAX_MILESTONES).execute();
      return render(p, group, 'Milestones', milestoneListBody(`${base}/milestones`, state, rows, (m) => `${base}/milestones/${m.iid}`, () => ''));
    }

    if (segment === 'milestones' && rest.length === 1) {
      const raw = rest[0]!;
      if (!/^\d{1,10}$/.test(raw) || Number(raw) > INT32_MAX) throw pageError(404);
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
    }
    throw pageError(404);
  });
};

export default groupPages;
