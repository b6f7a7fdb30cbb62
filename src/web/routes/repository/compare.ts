/**
 * /-/compare/:from...:to, the web_url of GET /projects/:id/repository/compare (entities/
 * repository-compare.ts) and the "Compare changes" link of push notifications: the commits on
 * `to` since `from` and the diff from their merge base, as the API compares them (domain/
 * repositories/compare.ts, its commit and diff limits). Either side may be a branch, a tag or a
 * commit, and may hold slashes. Reading takes download_code (the 404 page otherwise).
 * `from` and `to` are read as the API reads them (`from`...`to` split at the first `...`).
 */
import { compare } from '../../../domain/repositories/compare.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { html } from '../../html.ts';
import { pageError, type WebArea } from '../../router.ts';
import { commitLine } from '../../components/commits.ts';
import { fileSection } from './commits.ts';
import { repositoryOf } from './repository-page.ts';

/** Commits listed on the page (the newest; the API answers them all). */
const MAX_LISTED_COMMITS = 100;

const comparePage: WebArea = (web) => {
  web.project('GET', 'compare', async (p) => {
    const repo = repositoryOf(p);
    const spec = p.rest.join('/');
    const at = spec.indexOf('...');
    if (at <= 0) throw pageError(404);
    const from = spec.slice(0, at);
    const to = spec.slice(at + 3);
    if (!readableRevision(from) || !readableRevision(to)) throw pageError(404);
    const result = await compare(repo.gitDir, from, to, false);
    // A side that names no commit compares nothing: the Service's compare page says so (200),
    // as the API answers an empty comparison for an unknown `from`.
    if (!result || result.start === null) {
      return p.render({ title: `Compare ${from}...${to}`, active: 'commits', body: html`<p class="muted" id="compare-summary">There isn't anything to compare.</p>` });
    }
    const commits = result.commits.slice(-MAX_LISTED_COMMITS).reverse();
    return p.render({
      title: `Compare ${from}...${to}`, active: 'commits',
      body: html`<p class="muted" id="compare-summary">${result.same ? 'These refs name the same commit.'
        : `${result.commits.length} commit${result.commits.length === 1 ? '' : 's'}, ${result.diffs.length} changed file${result.diffs.length === 1 ? '' : 's'}`}${
        result.overflow ? ' (the diff is cut at the instance\'s limits)' : ''}</p>
${commits.length > 0 ? html`<ul class="list" id="commits">${commits.map((c) => html`<li>${commitLine(c, repo.base)}</li>`)}</ul>` : ''}
<div id="diffs">${result.diffs.map(fileSection)}</div>`,
    });
  });
};

export default comparePage;
