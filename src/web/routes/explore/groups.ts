/**
 * /explore/groups (Explore::GroupsController): the groups the viewer may see, by name, as GET
 * /groups lists them for the same viewer (public ones to everyone, internal ones to users who are
 * not external, every group to administrators, and the viewer's own).
 */
import { groupsQuery, orderGroups, PUBLIC_ONLY } from '../../../domain/groups/groups.queries.ts';
import { authorizedGroupLevels } from '../../../domain/members/members.queries.ts';
import { VISIBILITY_LEVELS } from '../../../domain/permissions/access.ts';
import { html } from '../../html.ts';
import { frame } from '../../layout.ts';
import type { WebArea } from '../../router.ts';
import { groupList, pageNumber, pagination, PER_PAGE, queryText } from '../../components/lists.ts';
import { exploreTabs, searchForm } from './projects.ts';

const exploreGroups: WebArea = (web) => {
  web.page('GET', '/explore/groups', async ({ ctx, request, session, signedIn }) => {
    const viewer = session?.user ?? null;
    const page = pageNumber(request);
    const search = queryText(request, 'search');
    const member = viewer && !viewer.admin ? [...(await authorizedGroupLevels(ctx.db, viewer.id)).keys()] : [];
    const qb = groupsQuery(ctx.db, {
      memberOf: viewer?.admin ? null : member,
      includeVisible: !viewer ? PUBLIC_ONLY : viewer.admin ? null
        : { minVisibility: viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal },
      ...(search ? { search } : {}),
    });
    const rows = await orderGroups(qb, 'name', 'asc').limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
    return frame({
      title: 'Explore groups', signedIn,
      body: html`${exploreTabs('groups')}
${searchForm('/explore/groups', search, 'Filter by name')}
${await groupList(ctx.db, rows.slice(0, PER_PAGE), search ? 'No groups match.' : 'There are no groups to show.')}
${pagination('/explore/groups', page, rows.length > PER_PAGE, { search })}`,
    });
  });
};

export default exploreGroups;
