/**
 * The CI lint editor (issue 33 item 4): `/-/ci/lint` checks a `.gitlab-ci.yml` in the context of
 * the project, as POST /projects/:id/ci/lint does (domain/pipelines/lint-config.ts), with an
 * optional dry run of the default branch's push pipeline, and lists the jobs it would create.
 * It takes update_build (Developer), as that route does.
 */
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, sendPage } from '../../layout.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { lintConfig, type LintResult } from '../../../domain/pipelines/lint-config.ts';
import { enc } from '../../ci-view.ts';

/** The largest configuration the editor takes: the API's bound of a string (1 MiB). */
const MAX_CONTENT = 1024 * 1024;

function form(p: ProjectPageRequest, content: string, dryRun: boolean): SafeHtml {
  return html`<form method="post" action="/${enc(p.project.fullPath)}/-/ci/lint">
<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">
<label for="lint-content">Contents of .gitlab-ci.yml</label>
<textarea id="lint-content" name="content" rows="18" spellcheck="false" required>${content}</textarea>
<label class="check"><input type="checkbox" name="dry_run" value="true"${dryRun ? html` checked` : ''}> Simulate a pipeline created for the default branch</label>
<button type="submit" class="primary">Validate</button>
</form>`;
}

function result(r: LintResult): SafeHtml {
  const jobs = r.jobs ?? [];
  return html`<section class="lint-result" aria-label="Result">
${r.valid ? html`<div class="notice" role="status">Syntax is correct.</div>` : html`<div class="alert" role="alert">This CI configuration is invalid:<ul>${r.errors.map((e) => html`<li>${e}</li>`)}</ul></div>`}
${r.warnings.length > 0 ? html`<div class="panel"><h2>Warnings</h2><ul>${r.warnings.map((w) => html`<li>${w}</li>`)}</ul></div>` : ''}
${jobs.length > 0 ? html`<table><thead><tr><th scope="col">Job</th><th scope="col">Stage</th><th scope="col">When</th><th scope="col">Allow failure</th><th scope="col">Tags</th></tr></thead>
<tbody>${jobs.map((j) => html`<tr><td>${j.name}</td><td>${j.stage}</td><td>${j.when}</td><td>${j.allow_failure ? 'yes' : 'no'}</td><td>${j.tag_list.join(', ')}</td></tr>`)}</tbody></table>` : ''}
${r.merged_yaml ? html`<details><summary>Merged YAML</summary><pre>${r.merged_yaml}</pre></details>` : ''}
</section>`;
}

const lint: WebArea = (web) => {
  web.project('GET', 'ci', async (p) => {
    if (p.rest.length !== 1 || p.rest[0] !== 'lint' || !p.project.can('read_build')) throw pageError(404);
    if (!p.project.can('update_build')) throw pageError(403);
    return p.render({ title: 'Validate your CI configuration', active: 'pipelines', body: form(p, '', false) });
  });
  web.project('POST', 'ci', async (p) => {
    if (p.rest.length !== 1 || p.rest[0] !== 'lint' || !p.project.can('read_build')) throw pageError(404);
    if (!p.project.can('update_build')) throw pageError(403);
    const body = (p.request.body ?? {}) as Record<string, unknown>;
    const content = typeof body.content === 'string' ? body.content : '';
    const dryRun = body.dry_run === 'true';
    const page = (outcome: SafeHtml) => p.render({ title: 'Validate your CI configuration', active: 'pipelines', body: html`${outcome}${form(p, content, dryRun)}` });
    if (content.length > MAX_CONTENT || content.includes('\u0000')) {
      return sendPage(p.reply, 400, page(html`<div class="alert" role="alert">The configuration must be text of at most 1 MiB.</div>`));
    }
    let outcome: SafeHtml;
    if (content.trim() === '') {
      outcome = result({ valid: false, errors: ['Please provide content of .gitlab-ci.yml'], warnings: [], merged_yaml: null });
    } else {
      outcome = result(await lintConfig(ciEnvFrom(p.ctx.db, p.ctx.config), {
        project: p.project.project, content, userId: p.session!.user.id, dryRun, includeJobs: true,
      }));
    }
    return page(outcome);
  });
};

export default lint;
