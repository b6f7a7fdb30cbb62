/**
 * File content as a page shows it: highlighted on the server by highlight.js (its output escapes
 * the text and adds only `<span class="hljs-…">`), with line numbers that link to themselves.
 * The language comes from the file name only; an unknown one is shown as escaped plain text
 * (guessing would run every grammar over the file).
 */
import hljs from 'highlight.js/lib/common';
import { html, SafeHtml } from '../html.ts';

const BY_NAME: Record<string, string> = { dockerfile: 'dockerfile', makefile: 'makefile', 'gemfile': 'ruby', 'rakefile': 'ruby' };

export function languageFor(fileName: string): string | null {
  const lower = fileName.toLowerCase();
  if (BY_NAME[lower]) return BY_NAME[lower];
  const ext = lower.includes('.') ? lower.slice(lower.lastIndexOf('.') + 1) : '';
  if (ext === '' || ext.length > 16) return null;
  return hljs.getLanguage(ext) ? ext : null;
}

/** Files longer than this are shown without highlighting (the grammar's time grows with the text). */
const MAX_HIGHLIGHT_BYTES = 256 * 1024;

export function highlighted(text: string, fileName: string): SafeHtml {
  const language = Buffer.byteLength(text) <= MAX_HIGHLIGHT_BYTES ? languageFor(fileName) : null;
  // highlight.js escapes every character of the text it returns (its escapeHTML), so the result
  // is markup kiln may insert as it is; without a language the text goes through html`` instead.
  return language ? new SafeHtml(hljs.highlight(text, { language, ignoreIllegals: true }).value) : html`${text}`;
}

export function codeView(text: string, fileName: string): SafeHtml {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n').length : text.split('\n').length;
  const numbers = Array.from({ length: lines }, (_, i) => html`<a href="#L${i + 1}" id="L${i + 1}">${i + 1}</a>\n`);
  return html`<div class="code"><table role="presentation"><tr>
<td class="ln"><pre>${numbers}</pre></td>
<td class="line"><pre><code class="hljs">${highlighted(text, fileName)}</code></pre></td>
</tr></table></div>`;
}

/** Whether content is binary as git decides it: a NUL byte in its first 8000 bytes. */
export function isBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0);
}

const HLJS_TOKEN = /<span class="[^"<>]*">|<\/span>|\n/g;

/**
 * The file's lines, each highlighted on its own (the blame page shows them in runs per commit):
 * the whole text is highlighted at once, so a construct over several lines (a comment, a string)
 * keeps its colour, and the markup is cut at each newline with the spans open there closed at
 * the line's end and opened again on the next. highlight.js writes only `<span class="…">`,
 * `</span>` and escaped text, so these three tokens are all the markup there is to follow.
 */
export function highlightedLines(text: string, fileName: string): SafeHtml[] {
  const markup = highlighted(text.endsWith('\n') ? text.slice(0, -1) : text, fileName).value;
  const lines: SafeHtml[] = [];
  const open: string[] = [];
  let current = '';
  let last = 0;
  for (const m of markup.matchAll(HLJS_TOKEN)) {
    current += markup.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[0] === '\n') {
      lines.push(new SafeHtml(current + '</span>'.repeat(open.length)));
      current = open.join('');
    } else {
      if (m[0] === '</span>') open.pop();
      else open.push(m[0]);
      current += m[0];
    }
  }
  lines.push(new SafeHtml(current + markup.slice(last) + '</span>'.repeat(open.length)));
  return lines;
}
