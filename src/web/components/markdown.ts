/**
 * The API's rendered Markdown (domain/markdown/render.ts: sanitised, the Service's markup, which
 * the API answers as it is) made fit for a page a keyboard and a screen reader use (WCAG 2 A/AA,
 * as axe-core checks every page): heading anchors leave the tab order (projects/overview.ts
 * keyboardSafe), an image without alternative text is named by its file (an image the renderer
 * wrapped in a link is that link's only content, and a link needs a name), and a task list's
 * checkbox is named as a task. Only attributes are added; the sanitised markup is kept.
 * markdownBlock renders user Markdown for a page (snippet and release descriptions, wiki pages)
 * through the API's renderer (domain/markdown/render-pool.ts, as POST /markdown answers).
 */
import { parseDocument } from 'htmlparser2';
import render from 'dom-serializer';
import { elements } from '../../domain/markdown/dom.ts';
import type { MarkdownRenderer } from '../../domain/markdown/render-pool.ts';
import { html, SafeHtml } from '../html.ts';
import { keyboardSafe } from '../routes/projects/overview.ts';

function fileName(src: string | undefined): string {
  if (!src || src.startsWith('data:')) return 'Image';
  const last = src.split(/[?#]/, 1)[0]!.split('/').filter(Boolean).pop() ?? '';
  let name = last;
  try {
    name = decodeURIComponent(last);
  } catch {
    // an address that is not percent-encoded text is named as it is written
  }
  return name ? `Image: ${name.slice(0, 100)}` : 'Image';
}

export function pageMarkdown(rendered: string): SafeHtml {
  const doc = parseDocument(keyboardSafe(rendered));
  for (const el of elements(doc)) {
    if (el.name === 'img' && el.attribs.alt === undefined) el.attribs.alt = fileName(el.attribs['data-src'] ?? el.attribs.src);
    if (el.name === 'input' && (el.attribs.class ?? '').split(' ').includes('task-list-item-checkbox') && !el.attribs['aria-label']) {
      el.attribs['aria-label'] = el.attribs.checked !== undefined ? 'Task, done' : 'Task';
    }
  }
  // The renderer's output is sanitised HTML (domain/markdown/sanitize.ts); the attributes added
  // here are escaped by the serializer.
  return new SafeHtml(render(doc, { encodeEntities: 'utf8' }));
}

export async function markdownBlock(markdown: MarkdownRenderer, text: string, externalUrl: string, id?: string): Promise<SafeHtml> {
  const rendered = await markdown.render(text, { gfm: true, ownHost: new URL(externalUrl).host });
  return html`<div class="markdown"${id ? html` id="${id}"` : ''}>${pageMarkdown(rendered)}</div>`;
}
