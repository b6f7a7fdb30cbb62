/**
 * User Markdown on a page (snippet and release descriptions, wiki pages): the API's renderer
 * (domain/markdown/render-pool.ts, sanitised, as POST /markdown answers), with the heading anchors
 * kept out of the tab order (projects/overview.ts keyboardSafe). The renderer's output is the one
 * kind of generated markup a page embeds as it is.
 */
import type { MarkdownRenderer } from '../../domain/markdown/render-pool.ts';
import { html, SafeHtml } from '../html.ts';
import { keyboardSafe } from '../routes/projects/overview.ts';

export async function markdownBlock(markdown: MarkdownRenderer, text: string, externalUrl: string, id?: string): Promise<SafeHtml> {
  const rendered = await markdown.render(text, { gfm: true, ownHost: new URL(externalUrl).host });
  return html`<div class="markdown"${id ? html` id="${id}"` : ''}>${new SafeHtml(keyboardSafe(rendered))}</div>`;
}
