/**
 * `/`: signed in, the viewer's projects (those they reach by membership, as GET
 * /projects?membership=true) and the newest pipelines of the ones whose jobs they may read;
 * signed out, the public projects and a way to sign in.
 */
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { recentPipelinesOf } from '../../../domain/pipelines/pipelines.queries.ts';
import { ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame } from '../../layout.ts';
import type { WebArea } from '../../router.ts';
import { pathHref, PER_PAGE, projectList, withPaths } from '../../components/lists.ts';
import { statusBadge } from '../../components/status.ts';

const RECENT_PIPELINES = 10;
/** The pipelines shown come from this many of the viewer's most recently active projects. */
const PIPELINE_PROJECTS = 100;

const home: WebArea = (web) => {
  web.page('GET', '/', async ({ ctx, session, signedIn, hasProjectPage }) => {
    const viewer = session?.user ?? null;
    if (!viewer) {
      const qb = await findProjects(ctx.db, null, { archived: false });
      const rows = await qb.orderBy('last_activity_at', 'desc').orderBy('id', 'desc').limit(PER_PAGE).execute();
      return frame({
        title: 'Welcome to kiln', signedIn,
        body: html`<p>Code, merge requests and CI/CD pipelines. <a href="/users/sign_in" class="button primary">Sign in</a></p>
<h2>Public projects</h2>
${projectList(await withPaths(ctx.db, rows), 'There are no public projects yet.')}
<p><a href="/explore/projects">Explore all projects</a></p>`,
      });
    }
    const mine = await (await findProjects(ctx.db, viewer, { membership: true, archived: false }))
      .orderBy('last_activity_at', 'desc').orderBy('id', 'desc').limit(PER_PAGE).execute();
    // Reporters and above read every pipeline of a project (read_build, project.policy.ts).
    const withJobs = await (await findProjects(ctx.db, viewer, { membership: true, minAccessLevel: ACCESS_LEVELS.reporter }))
      .orderBy('last_activity_at', 'desc').orderBy('id', 'desc').limit(PIPELINE_PROJECTS).execute();
    const pipelines = await recentPipelinesOf(ctx.db, withJobs.map((p) => p.id), RECENT_PIPELINES);
    const listed = await withPaths(ctx.db, withJobs.filter((p) => pipelines.some((pl) => pl.project_id === p.id)));
    const pathOf = new Map(listed.map((l) => [l.project.id, l.fullPath]));
    const linkPipelines = hasProjectPage('pipelines');
    const pipelineRows: SafeHtml[] = pipelines.map((pl) => {
      const fullPath = pathOf.get(pl.project_id) ?? '';
      const label = html`#${pl.id}`;
      return html`<tr>
<td>${statusBadge(pl.status)}</td>
<td>${linkPipelines ? html`<a href="${pathHref(fullPath)}/-/pipelines/${pl.id}">${label}</a>` : label}</td>
<td><a href="${pathHref(fullPath)}">${fullPath}</a></td>
<td><code>${pl.ref}</code></td>
<td><code>${pl.sha.slice(0, 8)}</code></td>
</tr>`;
    });
    return frame({
      title: 'Your projects', signedIn,
      body: html`${projectList(await withPaths(ctx.db, mine), "You aren't a member of any project yet.")}
<p><a href="/explore/projects">Explore projects</a></p>
<h2>Recent pipelines</h2>
${pipelineRows.length === 0 ? html`<p class="muted" id="pipelines">No pipelines yet.</p>` : html`<table id="pipelines">
<thead><tr><th scope="col">Status</th><th scope="col">Pipeline</th><th scope="col">Project</th><th scope="col">Ref</th><th scope="col">Commit</th></tr></thead>
<tbody>${pipelineRows}</tbody></table>`}`,
    });
  });
};

export default home;
