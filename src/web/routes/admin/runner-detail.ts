/**
 * One runner in the admin area: /admin/runners/:id (what GET /runners/:id shows: its type,
 * status, tags, what it said about itself, the projects it serves) and /admin/runners/:id/edit
 * (the form of PUT /runners/:id: description, paused, protected, run untagged, locked, tags,
 * maximum timeout, maintenance note, with the same validations, register-runner.ts
 * runnerErrors). These are the GraphQL runner's adminUrl and editAdminUrl. Administrators only;
 * anyone else gets the 404 page, signed-out visitors the sign-in page.
 */
import type { RunnerRow } from '../../../db/tables/ci.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { findRunner, runnerProjectIds, updateRunner } from '../../../domain/runners/runners.queries.ts';
import { runnerStatus } from '../../../domain/runners/contacts.ts';
import { normalizeTags, runnerErrors } from '../../../domain/runners/register-runner.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { ACCESS_LEVELS } from '../../../http/routes/runners/protocol.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame, redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import { projectList, withPaths } from '../../components/lists.ts';
import { csrfInput, field, flashOf, formOf, ID, messages, type Flash } from '../profile/profile-view.ts';
import { admin } from './users.ts';

const BACK = '/admin/runners';
/** A text field's bound, as the API's strings (P.string, 1 MiB). */
const MAX_TEXT = 1024 * 1024;
/** Projects listed on a runner's page. */
const MAX_PROJECTS = 100;

async function runnerOf(p: PageRequest & { params: { id: string } }): Promise<RunnerRow> {
  const { id } = p.params;
  const runner = ID.test(id) ? await findRunner(p.ctx.db, Number(id)) : undefined;
  if (!runner) throw pageError(404);
  return runner;
}

const crumbs = (r: RunnerRow, last?: string) => [{ text: 'Admin Area' }, { text: 'Runners', href: BACK },
  ...(last ? [{ text: `#${r.id}`, href: `${BACK}/${r.id}` }, { text: last }] : [{ text: `#${r.id}` }])];

async function showPage(p: PageRequest, r: RunnerRow): Promise<SafeHtml> {
  const projects = r.runner_type === 'project_type'
    ? await findProjectsByIds(p.ctx.db, (await runnerProjectIds(p.ctx.db, r.id)).slice(0, MAX_PROJECTS)) : [];
  const row = (label: string, value: SafeHtml | string) => html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;
  return frame({
    title: `Runner #${r.id}`, signedIn: p.signedIn, breadcrumbs: crumbs(r),
    body: html`<p><a href="${BACK}/${r.id}/edit" id="edit-runner">Edit</a></p>
<table id="runner"><tbody>
${row('Description', r.description ?? '')}
${row('Type', r.runner_type.replace('_type', ''))}
${row('Status', r.active ? runnerStatus(r) : 'paused')}
${row('Protected', r.access_level === 'ref_protected' ? 'yes' : 'no')}
${row('Runs untagged jobs', r.run_untagged ? 'yes' : 'no')}
${row('Locked to its projects', r.locked ? 'yes' : 'no')}
${row('Tags', r.tag_list)}
${row('Maximum job timeout', r.maximum_timeout === null ? '' : `${r.maximum_timeout} s`)}
${row('Maintenance note', r.maintenance_note ?? '')}
${row('Version', [r.version, r.revision, r.platform, r.architecture].filter(Boolean).join(' '))}
${row('IP address', r.ip_address ?? '')}
${row('Last contact', r.contacted_at ? timeTag(r.contacted_at) : 'Never')}
</tbody></table>
${r.runner_type === 'project_type' ? html`<h2>Projects</h2>${projectList(await withPaths(p.ctx.db, projects), 'No projects.')}` : ''}`,
  });
}

function editPage(p: PageRequest, r: RunnerRow, flash: Flash = {}): SafeHtml {
  const check = (name: string, label: string, on: boolean) => html`<div><input type="checkbox" id="runner-${name}" name="${name}" value="1"${on ? html` checked` : ''}>
<label for="runner-${name}">${label}</label></div>`;
  return frame({
    title: `Edit runner #${r.id}`, signedIn: p.signedIn, breadcrumbs: crumbs(r, 'Edit'), narrow: true,
    body: html`${flashOf(flash)}
<form method="post" action="${BACK}/${r.id}" id="runner-form">${csrfInput(p)}
<label for="runner-description">Description</label><input id="runner-description" name="description" value="${r.description ?? ''}">
${check('paused', 'Paused: picks no new jobs', r.active !== 1)}
${check('protected', 'Protected: runs jobs of protected branches and tags only', r.access_level === 'ref_protected')}
${check('run_untagged', 'Runs untagged jobs', r.run_untagged === 1)}
${check('locked', 'Locked to its current projects', r.locked === 1)}
<label for="runner-tags">Tags (comma separated)</label><input id="runner-tags" name="tag_list" value="${r.tag_list.split(' ').join(', ')}">
<label for="runner-timeout">Maximum job timeout (seconds, at least 600; empty for none)</label><input id="runner-timeout" name="maximum_timeout" inputmode="numeric" value="${r.maximum_timeout ?? ''}">
<label for="runner-note">Maintenance note</label><textarea id="runner-note" name="maintenance_note">${r.maintenance_note ?? ''}</textarea>
<button type="submit" class="primary">Save changes</button>
</form>`,
  });
}

const runnerDetail: WebArea = (web) => {
  web.page('GET', `${BACK}/:id`, async (p) => (admin(p) ? showPage(p, await runnerOf(p)) : p.reply));
  web.page('GET', `${BACK}/:id/edit`, async (p) => (admin(p) ? editPage(p, await runnerOf(p)) : p.reply));

  // The edit form's answer: PUT /runners/:id's fields and refusals (422 with the messages).
  web.page('POST', `${BACK}/:id`, async (p) => {
    admin(p);
    const r = await runnerOf(p);
    const form = formOf(p);
    const invalid: string[] = [];
    const text = (name: string) => {
      const value = field(form, name);
      if (value === undefined) return undefined;
      if (value.length > MAX_TEXT || !isStorableText(value)) invalid.push(`${name} is invalid`);
      return value;
    };
    const timeout = (text('maximum_timeout') ?? '').trim();
    if (timeout !== '' && !/^\d{1,9}$/.test(timeout)) invalid.push('maximum_timeout is invalid');
    const description = text('description');
    const tagText = text('tag_list') ?? '';
    const note = text('maintenance_note');
    if (invalid.length > 0) return sendPage(p.reply, 400, editPage(p, r, { errors: invalid }));
    const tagList = normalizeTags(tagText.split(','));
    const runUntagged = form.run_untagged === '1';
    const maintenanceNote = note ?? null;
    const maximumTimeout = timeout === '' ? null : Number(timeout);
    const errors = runnerErrors({ maintenanceNote, tagList, runUntagged, maximumTimeout });
    if (Object.keys(errors).length > 0) return sendPage(p.reply, 422, editPage(p, r, { errors: messages(errors) }));
    await updateRunner(p.ctx.db, r.id, {
      description: description ?? r.description,
      active: form.paused === '1' ? 0 : 1,
      access_level: form.protected === '1' ? ACCESS_LEVELS[1] : ACCESS_LEVELS[0],
      run_untagged: runUntagged ? 1 : 0,
      locked: form.locked === '1' ? 1 : 0,
      tag_list: tagList.join(' '),
      maximum_timeout: maximumTimeout,
      maintenance_note: maintenanceNote,
    });
    return redirect(p.reply, 'POST', `${BACK}/${r.id}`);
  });
};

export default runnerDetail;
