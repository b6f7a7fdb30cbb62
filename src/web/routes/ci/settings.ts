/**
 * A project's CI/CD settings page (issue 33 item 4), `/-/settings/ci_cd`, for Maintainers
 * (admin_build, as the variables and triggers APIs): the project's CI/CD variables — values never
 * shown on the page (they are read through the API), added and deleted through the same domain
 * rules as POST/DELETE /projects/:id/variables — the runners available to the project with its
 * registration token and a reset, as POST /projects/:id/runners/reset_registration_token, and
 * pipeline triggers, a new trigger's token shown once on the page that created it.
 */
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, redirect, sendPage } from '../../layout.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { createVariable } from '../../../domain/ci-variables/change-variable.ts';
import { deleteVariable, ownerVariablesQuery } from '../../../domain/ci-variables/ci-variables.queries.ts';
import { VARIABLE_TYPES, type VariableType } from '../../../domain/ci-variables/variable-rules.ts';
import { runnersQuery } from '../../../domain/runners/runners.queries.ts';
import { runnerStatus } from '../../../domain/runners/contacts.ts';
import { resetRegistrationToken, shownRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { createTrigger, descriptionErrors, shortToken } from '../../../domain/triggers/manage-triggers.ts';
import { deleteTrigger, findTriggerInProject, projectTriggersQuery } from '../../../domain/triggers/triggers.queries.ts';
import { enc } from '../../ci-view.ts';
import { isStorableId } from '../../../db/constraints.ts';

/** The most rows each section lists (a page, not an export: the API pages through the rest). */
const MAX_ROWS = 200;
const ID = /^\d{1,10}$/;
/** A path id that can name a row: ten digits may still be past PostgreSQL's integer (a 500 there). */
const rowId = (id: string | undefined): id is string => id !== undefined && ID.test(id) && isStorableId(Number(id));

type Form = Record<string, unknown>;
const field = (f: Form, name: string): string | undefined => (typeof f[name] === 'string' ? f[name] as string : undefined);

interface Flash { notice?: SafeHtml | string; errors?: string[] }

/** A validation failure's messages as the API's 400 names them: `<field> <message>`. */
const messages = (errors: Record<string, string[]>) => Object.entries(errors).flatMap(([k, msgs]) => msgs.map((m) => `${k} ${m}`));

function hidden(p: ProjectPageRequest): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">`;
}

async function render(p: ProjectPageRequest, flash: Flash = {}): Promise<SafeHtml> {
  const { db, config } = p.ctx;
  const projectId = p.project.project.id;
  const sealer = await sealerFor(config.dataDir);
  const [variables, runners, triggers, token] = await Promise.all([
    ownerVariablesQuery(db, { kind: 'project', id: projectId }).limit(MAX_ROWS).execute(),
    runnersQuery(db, { scope: { projectIds: [projectId], groupIds: p.project.lineage, instance: true }, now: new Date() })
      .limit(MAX_ROWS).execute(),
    projectTriggersQuery(db, projectId).limit(MAX_ROWS).execute(),
    shownRegistrationToken(db, sealer, 'Project', projectId),
  ]);
  const action = `/${enc(p.project.fullPath)}/-/settings/ci_cd`;
  const yes = (b: number) => (b ? 'yes' : 'no');
  return p.render({
    title: 'CI/CD settings', active: 'settings',
    body: html`${flash.notice ? html`<div class="notice" role="status">${flash.notice}</div>` : ''}
${flash.errors?.length ? html`<div class="alert" role="alert"><ul>${flash.errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<section class="panel" aria-labelledby="variables-heading"><h2 id="variables-heading">Variables</h2>
<p class="muted">Values are not shown here; jobs receive them, and Maintainers read them through the API.</p>
${variables.length === 0 ? html`<p>No variables.</p>` : html`<table><thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Environments</th><th scope="col">Protected</th><th scope="col">Masked</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${variables.map((v) => html`<tr><td><code>${v.key}</code></td><td>${v.variable_type}</td><td>${v.environment_scope}</td><td>${yes(v.protected)}</td><td>${yes(v.masked)}</td>
<td><form class="inline" method="post" action="${action}/variables/${v.id}/delete">${hidden(p)}<button type="submit" aria-label="Delete variable ${v.key}">Delete</button></form></td></tr>`)}</tbody></table>`}
<form method="post" action="${action}/variables">${hidden(p)}
<label for="var-key">Key</label><input type="text" id="var-key" name="key" required maxlength="255" pattern="[A-Za-z0-9_]+">
<label for="var-value">Value</label><textarea id="var-value" name="value" rows="3" required></textarea>
<label for="var-type">Type</label><select id="var-type" name="variable_type">${VARIABLE_TYPES.map((t) => html`<option value="${t}">${t}</option>`)}</select>
<label for="var-scope">Environment scope</label><input type="text" id="var-scope" name="environment_scope" value="*" maxlength="255">
<label class="check"><input type="checkbox" name="protected" value="true"> Protect variable (protected branches and tags only)</label>
<label class="check"><input type="checkbox" name="masked" value="true"> Mask variable in job logs</label>
<button type="submit" class="primary">Add variable</button></form>
</section>
<section class="panel" aria-labelledby="runners-heading"><h2 id="runners-heading">Runners</h2>
${token ? html`<p>Register a runner for this project with the registration token <code id="registration-token">${token}</code>.</p>` : ''}
<form method="post" action="${action}/reset_registration_token">${hidden(p)}<button type="submit">Reset registration token</button></form>
${runners.length === 0 ? html`<p>No runners are available to this project.</p>` : html`<table><thead><tr><th scope="col">Runner</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Tags</th></tr></thead>
<tbody>${runners.map((r) => html`<tr><td>#${r.id} ${r.description ?? ''}</td><td>${r.runner_type.replace('_type', '')}</td><td>${r.active ? runnerStatus(r) : 'paused'}</td><td>${r.tag_list}</td></tr>`)}</tbody></table>`}
</section>
<section class="panel" aria-labelledby="triggers-heading"><h2 id="triggers-heading">Pipeline triggers</h2>
${triggers.length === 0 ? html`<p>No triggers.</p>` : html`<table><thead><tr><th scope="col">Token</th><th scope="col">Description</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${triggers.map((tr) => html`<tr><td><code>${tr.encrypted_token ? `${shortToken(sealer.open(tr.encrypted_token))}…` : '…'}</code></td><td>${tr.description}</td><td>${tr.last_used_at ?? 'never'}</td>
<td><form class="inline" method="post" action="${action}/triggers/${tr.id}/delete">${hidden(p)}<button type="submit" aria-label="Revoke trigger ${tr.description}">Revoke</button></form></td></tr>`)}</tbody></table>`}
<form method="post" action="${action}/triggers">${hidden(p)}
<label for="trigger-description">Description</label><input type="text" id="trigger-description" name="description" required maxlength="255">
<button type="submit" class="primary">Add trigger</button></form>
</section>`,
  });
}

function authorize(p: ProjectPageRequest): void {
  if ((p.rest.length > 0 && p.rest[0] !== 'ci_cd') || !p.project.can('read_build')) throw pageError(404);
  if (!p.project.can('admin_build')) throw pageError(403);
}

const settings: WebArea = (web) => {
  web.project('GET', 'settings', async (p) => {
    authorize(p);
    // The sidebar's Settings entry: CI/CD is the project settings page kiln has.
    if (p.rest.length === 0) return redirect(p.reply, 'GET', `/${enc(p.project.fullPath)}/-/settings/ci_cd`);
    if (p.rest.length !== 1) throw pageError(404);
    return render(p);
  });

  web.project('POST', 'settings', async (p) => {
    authorize(p);
    if (p.rest.length === 0) throw pageError(404);
    const { db, config } = p.ctx;
    const projectId = p.project.project.id;
    const f = (p.request.body ?? {}) as Form;
    const back = `/${enc(p.project.fullPath)}/-/settings/ci_cd`;
    const [, what, id, verb] = p.rest;
    if (what === 'variables' && id === undefined) {
      const type = field(f, 'variable_type') ?? 'env_var';
      if (!(VARIABLE_TYPES as readonly string[]).includes(type)) {
        return sendPage(p.reply, 400, await render(p, { errors: ['variable_type is invalid'] }));
      }
      const result = await createVariable(db, await sealerFor(config.dataDir), { kind: 'project', id: projectId }, {
        key: field(f, 'key') ?? '', value: field(f, 'value') ?? '', variable_type: type as VariableType,
        protected: field(f, 'protected') === 'true', masked: field(f, 'masked') === 'true',
        environment_scope: field(f, 'environment_scope') || '*',
      });
      if (!result.ok) return sendPage(p.reply, 400, await render(p, { errors: messages(result.errors) }));
      return redirect(p.reply, 'POST', back);
    }
    if (what === 'variables' && rowId(id) && verb === 'delete' && p.rest.length === 4) {
      const rows = await ownerVariablesQuery(db, { kind: 'project', id: projectId }).where('id', '=', Number(id)).execute();
      if (rows.length === 0) throw pageError(404);
      await deleteVariable(db, Number(id));
      return redirect(p.reply, 'POST', back);
    }
    if (what === 'reset_registration_token' && p.rest.length === 2) {
      await resetRegistrationToken(db, await sealerFor(config.dataDir), 'Project', projectId);
      return redirect(p.reply, 'POST', back);
    }
    if (what === 'triggers' && id === undefined) {
      const description = field(f, 'description') ?? '';
      const errors = descriptionErrors(description);
      if (errors) return sendPage(p.reply, 400, await render(p, { errors: messages(errors) }));
      const created = await createTrigger(db, await sealerFor(config.dataDir), projectId, p.session!.user.id, description);
      // Shown once, on the page that made it: later pages show its first characters only.
      return render(p, { notice: html`New trigger token: <code id="new-trigger-token">${created.token}</code>. Copy it now.` });
    }
    if (what === 'triggers' && rowId(id) && verb === 'delete' && p.rest.length === 4) {
      if (!await findTriggerInProject(db, projectId, Number(id))) throw pageError(404);
      await deleteTrigger(db, Number(id));
      return redirect(p.reply, 'POST', back);
    }
    throw pageError(404);
  });
};

export default settings;
