/** A commit as one line of a list or a box: short id, title, author and time, escaped. */
import type { CommitInfo } from '../../domain/repositories/git-read.ts';
import { html, type SafeHtml } from '../html.ts';

export const commitTitle = (c: CommitInfo) => c.message.split('\n', 1)[0] ?? '';

export function timeAgo(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export function commitLine(c: CommitInfo, projectHref: string, extra: SafeHtml | string = ''): SafeHtml {
  return html`<div class="commit">
<a class="item-title" href="${projectHref}/-/commit/${c.id}">${commitTitle(c)}</a> ${extra}
<div class="muted"><span>${c.authorName}</span> authored ${timeAgo(c.authoredDate)} · <code>${c.id.slice(0, 8)}</code></div>
</div>`;
}
