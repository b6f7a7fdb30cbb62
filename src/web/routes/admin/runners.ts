/**
 * /admin/runners (issue 33 item 6; the Service's admin area `resources :runners` with `pause`
 * and `resume`): administrators list every runner of the instance with its status (as GET
 * /runners/all, domain/runners/contacts.ts runnerStatus), pause and resume it as PUT /runners/:id
 * with `paused` does, and delete it as DELETE /runners/:id does, with the same refusal for a
 * project runner shared by several projects. Anyone else gets the 404 page.
 */
import { deleteRunner, findRunner, runnerProjectIds, runnersQuery, updateRunner } from '../../../domain/runners/runners.queries.ts';
import { runnerStatus } from '../../../domain/runners/contacts.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame, redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import { csrfInput, flashOf, ID, type Flash } from '../profile/profile-view.ts';
import { admin } from './users.ts';

const MAX_ROWS = 200;
const BACK = '/admin/runners';

async function render(p: PageRequest, flash: Flash = {}): Promise<SafeHtml> {
  const now = new Date();
  const runners = await runnersQuery(p.ctx.db, { now }).limit(MAX_ROWS).execute();
  return frame({
    title: 'Runners', signedIn: p.signedIn, breadcrumbs: [{ text: 'Admin Area' }, { text: 'Runners' }],
    body: html`${flashOf(flash)}
${runners.length === 0 ? html`<p>No runners registered.</p>` : html`<table><thead><tr><th scope="col">Runner</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Tags</th><th scope="col">Last contact</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${runners.map((r) => html`<tr><td>#${r.id} ${r.description ?? ''}</td><td>${r.runner_type.replace('_type', '')}</td><td id="runner-status-${r.id}">${r.active ? runnerStatus(r, now) : 'paused'}</td><td>${r.tag_list}</td>
<td>${r.contacted_at ? timeTag(r.contacted_at) : 'Never'}</td>
<td><form class="inline" method="post" action="${BACK}/${r.id}/${r.active ? 'pause' : 'resume'}">${csrfInput(p)}<button type="submit" aria-label="${r.active ? 'Pause' : 'Resume'} runner ${r.id}">${r.active ? 'Pause' : 'Resume'}</button></form>
<form class="inline" method="post" action="${BACK}/${r.id}/delete">${csrfInput(p)}<button type="submit" aria-label="Delete runner ${r.id}">Delete</button></form></td></tr>`)}</tbody></table>`}
${runners.length === MAX_ROWS ? html`<p class="muted">The first ${MAX_ROWS} runners are shown; the API lists them all.</p>` : ''}`,
  });
}

const runners: WebArea = (web) => {
  web.page('GET', BACK, async (p) => (admin(p) ? render(p) : p.reply));

  web.page('POST', `${BACK}/:id/:operation`, async (p) => {
    admin(p);
    const { id, operation } = p.params;
    const runner = ID.test(id) ? await findRunner(p.ctx.db, Number(id)) : undefined;
    if (!runner || !['pause', 'resume', 'delete'].includes(operation)) throw pageError(404);
    if (operation === 'delete') {
      if (runner.runner_type === 'project_type' && (await runnerProjectIds(p.ctx.db, runner.id)).length > 1) {
        return sendPage(p.reply, 400, await render(p, { errors: ['Runner associated with more than one project'] }));
      }
      await deleteRunner(p.ctx.db, runner.id);
    } else {
      await updateRunner(p.ctx.db, runner.id, { active: operation === 'resume' ? 1 : 0 });
    }
    return redirect(p.reply, 'POST', BACK);
  });
};

export default runners;
