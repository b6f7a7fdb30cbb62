/**
 * `/<project>/-/issues/new` and its POST to `/<project>/-/issues`: title, description, labels and
 * confidentiality, for those who may open issues (create_issue, as POST /projects/:id/issues
 * authorizes). The issue is made by the API's createIssue, which keeps labels for triagers only
 * (IssuableBaseService#filter_params drops them silently for the others) and creates missing ones.
 */
import { createIssue } from '../../../domain/issues/create-issue.ts';
import { labelTitles } from '../../../domain/issues/issue-labels.ts';
import { requestOrigin } from '../../../http/entities/user-agent-detail.ts';
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, redirect, sendPage } from '../../layout.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { redirectToSignIn } from '../../session.ts';
import { formText, issuePath, issuesPath, type Form } from '../../issue-view.ts';

const TITLE_MAX = 255;
/** The API's bound of a description (P.string's 1 MiB, issue 13; the Service's Issuable description limit). */
const ISSUE_DESCRIPTION_MAX = 1_048_576;
/** Labels one form may give: a few titles, comma-separated, each a label the form may create. */
const LABELS_COUNT_MAX = 50;
const LABELS_MAX = LABELS_COUNT_MAX * 256;

interface Draft { title?: string; description?: string; labels?: string; confidential?: boolean }

function newIssueForm(p: ProjectPageRequest, draft: Draft = {}, errors: string[] = []): SafeHtml {
  const triage = p.project.can('admin_issue');
  const list = issuesPath(p.project.fullPath);
  return p.render({
    title: 'New issue', active: 'issues',
    breadcrumbs: [{ text: p.project.project.name, href: `/${p.project.fullPath.split('/').map(encodeURIComponent).join('/')}` },
      { text: 'Issues', href: list }, { text: 'New' }],
    body: html`${errors.length > 0 ? html`<div class="alert" role="alert"><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<form method="post" action="${list}" class="panel issue-form">
<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">
<label for="issue-title">Title</label><input type="text" id="issue-title" name="title" required maxlength="${TITLE_MAX}" value="${draft.title ?? ''}">
<label for="issue-description">Description</label><textarea id="issue-description" name="description" rows="10" maxlength="${ISSUE_DESCRIPTION_MAX}">${draft.description ?? ''}</textarea>
${triage ? html`<label for="issue-labels">Labels (comma-separated)</label><input type="text" id="issue-labels" name="labels" maxlength="${LABELS_MAX}" value="${draft.labels ?? ''}">` : ''}
<label class="check"><input type="checkbox" name="confidential" value="true"${draft.confidential ? ' checked' : ''}> This issue is confidential and should only be visible to team members with at least Reporter access.</label>
<button type="submit" class="primary">Create issue</button> <a class="button" href="${list}">Cancel</a>
</form>`,
  });
}

/** The 404 page to those who may not open issues here, as the Service's authorize_create_issue! renders. */
function authorize(p: ProjectPageRequest): void {
  if (!p.project.can('create_issue')) throw pageError(404);
}

export function newIssuePage(p: ProjectPageRequest) {
  // Opening an issue takes an account: the signed-out are sent to sign in and back.
  if (!p.session) return redirectToSignIn(p.request, p.reply);
  authorize(p);
  return newIssueForm(p);
}

export async function createIssueFromForm(p: ProjectPageRequest) {
  authorize(p);
  const form = (p.request.body ?? {}) as Form;
  const title = formText(form, 'title', TITLE_MAX * 4);
  const description = formText(form, 'description', ISSUE_DESCRIPTION_MAX * 2);
  const labels = formText(form, 'labels', LABELS_MAX);
  const confidential = form.confidential === 'true';
  const draft: Draft = { title, description, labels, confidential };
  const errors: string[] = [];
  if (title === undefined || title.trim() === '') errors.push("Title can't be blank");
  else if ([...title].length > TITLE_MAX) errors.push(`Title is too long (maximum is ${TITLE_MAX} characters)`);
  if (form.description !== undefined && description === undefined) errors.push('Description is not text');
  if (description !== undefined && [...description].length > ISSUE_DESCRIPTION_MAX) {
    errors.push(`Description is too long (maximum is ${ISSUE_DESCRIPTION_MAX} characters)`);
  }
  if (form.labels !== undefined && labels === undefined) errors.push('Labels are too long');
  const titles = labels ? labelTitles([labels]) : [];
  if (titles.some((t) => [...t].length > TITLE_MAX)) errors.push(`Labels may be at most ${TITLE_MAX} characters each`);
  if (titles.length > LABELS_COUNT_MAX) errors.push(`At most ${LABELS_COUNT_MAX} labels may be given`);
  if (errors.length > 0) return sendPage(p.reply, 400, newIssueForm(p, draft, errors));
  const user = p.session!.user;
  const result = await createIssue(p.ctx.db, {
    where: { project: p.project.project, lineage: p.project.lineage }, author: user, actor: p.project.actor,
    params: {
      title: title!, description: description === '' ? undefined : description, confidential,
      labels: titles.length > 0 ? titles : undefined,
    },
    origin: requestOrigin(p.request),
  });
  if (!result.ok) return sendPage(p.reply, 409, newIssueForm(p, draft, ['Duplicated issue']));
  return redirect(p.reply, 'POST', issuePath(p.project.fullPath, result.value.iid));
}
