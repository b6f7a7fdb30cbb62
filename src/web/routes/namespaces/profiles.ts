/**
 * /:user and /:group (any depth of sub-groups): a user's profile with the personal projects the
 * viewer may see, and a group's page with its sub-groups and projects the viewer may see. Both
 * lists come from the API's finders (GET /users/:id/projects, GET /groups/:id/subgroups and
 * /projects), so a page lists exactly what the API would for the same viewer.
 */
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { groupsQuery, orderGroups, PUBLIC_ONLY } from '../../../domain/groups/groups.queries.ts';
import { authorizedGroupLevels } from '../../../domain/members/members.queries.ts';
import { VISIBILITY_LEVELS, visibilityName } from '../../../domain/permissions/access.ts';
import { isInternal } from '../../../domain/users/user-kind.ts';
import { html } from '../../html.ts';
import { frame } from '../../layout.ts';
import { pageError, type WebArea } from '../../router.ts';
import { groupList, PER_PAGE, projectList, withPaths } from '../../components/lists.ts';

/** Projects and sub-groups shown on a profile or group page (the explore pages list them all). */
const SHOWN = PER_PAGE * 5;

const profiles: WebArea = (web) => {
  web.namespace('user', async ({ ctx, session, signedIn, user, namespace }) => {
    if (isInternal(user)) throw pageError(404);
    const qb = await findProjects(ctx.db, session?.user ?? null, { namespaceIds: [namespace.id] });
    const rows = await qb.orderBy('last_activity_at', 'desc').orderBy('id', 'desc').limit(SHOWN).execute();
    return frame({
      title: user.name, signedIn,
      body: html`<p class="muted" id="username">@${user.username}</p>
${user.state === 'blocked' ? html`<p class="alert">This user is blocked.</p>` : ''}
<h2>Personal projects</h2>
${projectList(await withPaths(ctx.db, rows), 'No projects to show.')}`,
    });
  });

  web.namespace('group', async ({ ctx, session, signedIn, group }) => {
    const viewer = session?.user ?? null;
    const member = viewer && !viewer.admin ? [...(await authorizedGroupLevels(ctx.db, viewer.id)).keys()] : [];
    const subgroups = await orderGroups(groupsQuery(ctx.db, {
      parentIds: [group.group.id],
      memberOf: viewer?.admin ? null : member,
      includeVisible: !viewer ? PUBLIC_ONLY : viewer.admin ? null
        : { minVisibility: viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal },
    }), 'name', 'asc').limit(SHOWN).execute();
    const qb = await findProjects(ctx.db, viewer, { namespaceIds: [group.group.id] });
    const projects = await qb.orderBy('last_activity_at', 'desc').orderBy('id', 'desc').limit(SHOWN).execute();
    const crumbs = group.fullPath.split('/');
    return frame({
      title: group.group.name, signedIn,
      breadcrumbs: crumbs.length > 1
        ? crumbs.slice(0, -1).map((c, i) => ({ text: c, href: `/${crumbs.slice(0, i + 1).map(encodeURIComponent).join('/')}` })) : [],
      body: html`<p class="muted">${group.group.description ?? ''} <span class="badge">${visibilityName(group.group.visibility_level)}</span>
<a href="/groups/${group.fullPath.split('/').map(encodeURIComponent).join('/')}/-/group_members">Members</a></p>
<h2>Subgroups</h2>
${await groupList(ctx.db, subgroups, 'No subgroups to show.', 'subgroups')}
<h2>Projects</h2>
${projectList(await withPaths(ctx.db, projects), 'No projects to show.')}`,
    });
  });
};

export default profiles;
