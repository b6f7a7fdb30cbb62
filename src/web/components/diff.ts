/**
 * A file's diff as the pages show it (a commit's, a merge request's): the file's name and kind of
 * change above its unified patch, one table row per line marked as a hunk header, an addition or
 * a deletion. A file without a patch (binary, over the instance's patch limit, a mode change) is
 * listed by name; `collapsed` leaves the patch out with a link to it (the Service collapses
 * patches past a tenth of diff_max_patch_bytes and expands them on request).
 */
import { html, type SafeHtml } from '../html.ts';

export interface DiffFileView {
  oldPath: string;
  newPath: string;
  newFile: boolean;
  deletedFile: boolean;
  renamedFile: boolean;
  diff: string;
}

export function diffLines(diff: string): SafeHtml[] {
  return diff.split('\n').map((line) => {
    const kind = line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : '';
    return html`<tr${kind ? html` class="${kind}"` : ''}><td class="line">${line}</td></tr>`;
  });
}

export function diffFileSection(d: DiffFileView, id: string, o: { collapsed?: { href: string; reason: string } } = {}): SafeHtml {
  const name = d.renamedFile ? `${d.oldPath} → ${d.newPath}` : d.newPath;
  const change = d.newFile ? 'added' : d.deletedFile ? 'deleted' : d.renamedFile ? 'renamed' : 'modified';
  let body: SafeHtml;
  if (o.collapsed) {
    body = html`<div class="code"><p class="muted">&nbsp;${o.collapsed.reason} <a href="${o.collapsed.href}">Show the changes</a></p></div>`;
  } else if (d.diff === '') {
    body = html`<div class="code"><p class="muted">&nbsp;No changes shown (binary, too large, or a mode change only).</p></div>`;
  } else {
    body = html`<div class="code"><table role="presentation">${diffLines(d.diff)}</table></div>`;
  }
  return html`<section class="diff-file" id="${id}" aria-label="${name}">
<div class="file-header"><span><strong>${name}</strong> <span class="badge">${change}</span></span></div>
${body}
</section>`;
}
