/**
 * /explore/projects (the Service's Explore::ProjectsController): the projects the viewer may see,
 * most recently active first, with a name filter. What is listed comes from the API's own finder
 * (GET /projects, domain/projects/project.finder.ts), so the page lists exactly what the API would.
 */
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { html } from '../../html.ts';
import { frame } from '../../layout.ts';
import type { WebArea } from '../../router.ts';
import { pageNumber, pagination, PER_PAGE, projectList, queryText, withPaths } from '../../components/lists.ts';

export const exploreTabs = (active: 'projects' | 'groups') => html`<nav class="tabs" aria-label="Explore">
<a href="/explore/projects"${active === 'projects' ? html` aria-current="page"` : ''}>Projects</a>
<a href="/explore/groups"${active === 'groups' ? html` aria-current="page"` : ''}>Groups</a>
</nav>`;

export const searchForm = (action: string, value: string, label: string) => html`<form method="get" action="${action}" role="search">
<label for="search" class="visually-hidden">${label}</label>
<input type="search" id="search" name="search" value="${value}" placeholder="${label}">
</form>`;

const exploreProjects: WebArea = (web) => {
  web.page('GET', '/explore/projects', async ({ ctx, request, session, signedIn }) => {
    const page = pageNumber(request);
    const search = queryText(request, 'search');
    const qb = await findProjects(ctx.db, session?.user ?? null, { ...(search ? { search } : {}), archived: false });
    const rows = await qb.orderBy('last_activity_at', 'desc').orderBy('id', 'desc')
      .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
    const items = await withPaths(ctx.db, rows.slice(0, PER_PAGE));
    return frame({
      title: 'Explore projects', signedIn,
      body: html`${exploreTabs('projects')}
${searchForm('/explore/projects', search, 'Filter by name')}
${projectList(items, search ? 'No projects match.' : 'There are no projects to show.')}
${pagination('/explore/projects', page, rows.length > PER_PAGE, { search })}`,
    });
  });
};

export default exploreProjects;
