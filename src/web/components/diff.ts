/**
 * A file's diff as the pages show it (a commit's, a merge request's): the file's name and kind of
 * change above its unified patch, one table row per line marked as a hunk header, an addition or
 * a deletion. A file without a patch (binary, over the instance's patch limit, a mode change) is
 * listed by name; `collapsed` leaves the patch out with a link to it (the Service collapses
 * patches past a tenth of diff_max_patch_bytes and expands them on request).
 *
 * A page that takes line comments (a merge request's Changes) passes `comment`: every line of a
 * hunk gets its line number as a link to the page itself with `line_code=<file>_<old>_<new>`,
 * and the one line named there gets the page's single comment form beneath it — one form per
 * page, reached by a link per line, so a 20-file page stays within issue 33's weight budget and
 * needs no script.
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

export interface DiffLine {
  text: string;
  kind: 'hunk' | 'add' | 'del' | '';
  /** The line's number in the old and the new file (a hunk's own line and git's notes have neither). */
  oldLine: number | null;
  newLine: number | null;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/**
 * A unified patch's lines with their numbers, counted from each hunk header as git (and the
 * API's diff note check, mr-git.ts diffHasLine) counts them: an addition has only a new line, a
 * deletion only an old one, an unchanged line both (the Service's position old_line/new_line).
 */
export function numberedLines(diff: string): DiffLine[] {
  let oldPos = 0;
  let newPos = 0;
  let inHunk = false;
  return diff.split('\n').map((text): DiffLine => {
    const hunk = HUNK.exec(text);
    if (hunk) {
      oldPos = Number(hunk[1]);
      newPos = Number(hunk[2]);
      inHunk = true;
      return { text, kind: 'hunk', oldLine: null, newLine: null };
    }
    const kind = text.startsWith('+') ? 'add' : text.startsWith('-') ? 'del' : '';
    if (!inHunk || text === '' || text.startsWith('\\')) return { text, kind, oldLine: null, newLine: null };
    if (kind === 'add') return { text, kind, oldLine: null, newLine: newPos++ };
    if (kind === 'del') return { text, kind, oldLine: oldPos++, newLine: null };
    return { text, kind, oldLine: oldPos++, newLine: newPos++ };
  });
}

/** `<old>_<new>` of a line, 0 for the side it is not on (the tail of the Service's line_code). */
export const lineKey = (l: { oldLine: number | null; newLine: number | null }) => `${l.oldLine ?? 0}_${l.newLine ?? 0}`;

/** How a page takes line comments: the link of each line, and the line (`<old>_<new>`) that shows the form. */
export interface LineComments {
  /** The href of a line's link, given its `<old>_<new>`. */
  href: (key: string) => string;
  open?: { key: string; form: SafeHtml };
}

export function diffLines(diff: string, comments?: LineComments): SafeHtml[] {
  return numberedLines(diff).map((l) => {
    const cls = l.kind ? html` class="${l.kind}"` : '';
    if (!comments) return html`<tr${cls}><td class="line">${l.text}</td></tr>`;
    const n = l.newLine ?? l.oldLine;
    const key = n === null ? '' : lineKey(l);
    const ln = n === null ? html`<td class="ln"></td>` : html`<td class="ln"><a href="${comments.href(key)}">${n}</a></td>`;
    const row = html`<tr${cls}>${ln}<td class="line">${l.text}</td></tr>`;
    return comments.open && key === comments.open.key ? html`${row}<tr class="line-note" id="lc"><td></td><td>${comments.open.form}</td></tr>` : row;
  });
}

export function diffFileSection(
  d: DiffFileView, id: string, o: { collapsed?: { href: string; reason: string }; comments?: LineComments } = {},
): SafeHtml {
  const name = d.renamedFile ? `${d.oldPath} → ${d.newPath}` : d.newPath;
  const change = d.newFile ? 'added' : d.deletedFile ? 'deleted' : d.renamedFile ? 'renamed' : 'modified';
  let body: SafeHtml;
  if (o.collapsed) {
    body = html`<div class="code"><p class="muted">&nbsp;${o.collapsed.reason} <a href="${o.collapsed.href}">Show the changes</a></p></div>`;
  } else if (d.diff === '') {
    body = html`<div class="code"><p class="muted">&nbsp;No changes shown (binary, too large, or a mode change only).</p></div>`;
  } else {
    body = html`<div class="code"><table role="presentation">${diffLines(d.diff, o.comments)}</table></div>`;
  }
  return html`<section class="diff-file" id="${id}" aria-label="${name}">
<div class="file-header"><span><strong>${name}</strong> <span class="badge">${change}</span></span></div>
${body}
</section>`;
}
