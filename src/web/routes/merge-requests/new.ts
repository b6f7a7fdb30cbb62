/**
 * `/-/merge_requests/new` (issue 33): picking the source and target branches of the project and
 * opening a request, through the API's own create (POST /projects/:id/merge_requests:
 * domain/merge-requests/write-merge-request.ts createMergeRequest, then the merge request pipeline
 * of MergeRequests::AfterCreateService) after the same permission checks — create_merge_request_from
 * and create_merge_request_in on the project. A refused form is shown again with the model's
 * messages, at the API's status (422 same branch, 409 an open request of the branch, 400 invalid).
 */
import type { FastifyReply } from 'fastify';
import { listRefs } from '../../../domain/repositories/git-read.ts';
import { createMergeRequest } from '../../../domain/merge-requests/write-merge-request.ts';
import { createMergeRequestPipeline } from '../../../domain/pipelines/merge-request-pipelines.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { redirectToSignIn } from '../../session.ts';
import { queryText } from '../../components/lists.ts';
import { enc } from '../../ci-view.ts';
import { formField, refusalMessages } from './actions.ts';
import { csrfInput } from './overview.ts';
import { requestPath } from './mr-view.ts';

/** Branches offered in the pickers: the default branch and the most recently updated others. */
const MAX_BRANCHES = 200;

interface NewForm { source: string; target: string; title: string; description: string; squash: boolean; removeSource: boolean }

/** The Service's permission decision: 404 to those who may not read merge requests, 403 to readers who may not open one. */
function authorize(p: ProjectPageRequest): void {
  if (!p.project.can('read_merge_request') || !p.project.can('download_code')) throw pageError(404);
  if (!p.project.can('create_merge_request_from') || !p.project.can('create_merge_request_in')) throw pageError(403);
}

/** A title from a branch name, as the Service proposes one (`feature-x` → `Feature x`). */
function titleFromBranch(branch: string): string {
  const words = branch.replace(/[-_/]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : '';
}

async function formPage(p: ProjectPageRequest, f: NewForm, errors: string[] = []): Promise<SafeHtml> {
  const gitDir = projectRepository(p.ctx.config.storages, p.project.project).gitDir;
  const def = p.project.project.default_branch;
  const branches = (await listRefs(gitDir, 'refs/heads/'))
    .sort((a, b) => Number(b.name === def) - Number(a.name === def) || b.committedDate.localeCompare(a.committedDate))
    .slice(0, MAX_BRANCHES).map((b) => b.name);
  const options = (selected: string) => branches.map((b) => html`<option value="${b}"${b === selected ? html` selected` : ''}>${b}</option>`);
  const action = `/${enc(p.project.fullPath)}/-/merge_requests`;
  return p.render({
    title: 'New merge request', active: 'merge_requests',
    body: html`${errors.length > 0 ? html`<div class="alert" role="alert"><ul>${errors.map((m) => html`<li>${m}</li>`)}</ul></div>` : ''}
${branches.length < 2 ? html`<p class="muted">A merge request needs two branches: push a branch to propose its changes.</p>` : ''}
<form method="post" action="${action}/new" id="new-merge-request" class="panel">${csrfInput(p)}
<label for="mr-source">Source branch</label><select id="mr-source" name="source_branch" required>${options(f.source)}</select>
<label for="mr-target">Target branch</label><select id="mr-target" name="target_branch" required>${options(f.target)}</select>
<label for="mr-title">Title</label><input type="text" id="mr-title" name="title" value="${f.title}" required maxlength="255">
<label for="mr-description">Description</label><textarea id="mr-description" name="description" rows="8">${f.description}</textarea>
<label class="check"><input type="checkbox" name="remove_source_branch" value="true"${f.removeSource ? html` checked` : ''}> Delete source branch when the merge request is accepted</label>
<label class="check"><input type="checkbox" name="squash" value="true"${f.squash ? html` checked` : ''}> Squash commits when the merge request is accepted</label>
<button type="submit" class="primary">Create merge request</button>
</form>`,
  });
}

export async function newPage(p: ProjectPageRequest): Promise<SafeHtml | FastifyReply> {
  if (!p.session) return redirectToSignIn(p.request, p.reply);
  authorize(p);
  const source = queryText(p.request, 'source_branch');
  const target = queryText(p.request, 'target_branch') || (p.project.project.default_branch ?? '');
  return formPage(p, { source, target, title: titleFromBranch(source), description: '', squash: false, removeSource: true });
}

export async function createRequest(p: ProjectPageRequest): Promise<FastifyReply> {
  authorize(p);
  const { db, config } = p.ctx;
  const f: NewForm = {
    source: formField(p, 'source_branch', 255) ?? '', target: formField(p, 'target_branch', 255) ?? '',
    title: formField(p, 'title', 255) ?? '', description: formField(p, 'description') ?? '',
    squash: formField(p, 'squash', 8) === 'true', removeSource: formField(p, 'remove_source_branch', 8) === 'true',
  };
  const refuse = async (status: number, errors: string[]) => sendPage(p.reply, status, await formPage(p, f, errors));
  if (f.source === '' || f.target === '') return refuse(400, ['Choose a source branch and a target branch.']);
  // The API's checkTitle: a title of white space only is blank.
  if (f.title.trim() === '') return refuse(400, ["Title can't be blank"]);
  const user = p.session!.user;
  const result = await createMergeRequest(db, {
    where: { project: p.project.project, lineage: p.project.lineage }, user, actor: p.project.actor,
    gitDir: projectRepository(config.storages, p.project.project).gitDir,
  }, {
    title: f.title, description: f.description === '' ? undefined : f.description, sourceBranch: f.source, targetBranch: f.target,
    removeSourceBranch: f.removeSource, squash: f.squash,
  });
  if (!result.ok) return refuse(result.reason === 'same_branch' ? 422 : result.reason === 'exists' ? 409 : 400, refusalMessages(result));
  const created = result.value;
  // MergeRequests::AfterCreateService: a merge request pipeline, if some job asks for one, after the answer.
  setImmediate(() => {
    createMergeRequestPipeline(ciEnvFrom(db, config), created, user.id)
      .catch((err: unknown) => p.request.log.error({ err }, 'could not create the pipeline of a merge request'));
  });
  return redirect(p.reply, 'POST', requestPath(p.project.fullPath, created.iid));
}
