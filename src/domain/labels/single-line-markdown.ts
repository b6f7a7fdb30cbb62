/**
 * A label's `description_html`: the Service renders label descriptions with its single-line
 * Markdown pipeline (Banzai SingleLinePipeline: inline Markdown only — emphasis, code, links — no
 * blocks, no raw HTML), then sanitises. kiln does the same with markdown-it's inline renderer and
 * raw HTML off, so the result holds only the tags inline Markdown makes.
 */
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const ALLOWED = {
  allowedTags: ['a', 'b', 'strong', 'i', 'em', 'code', 's', 'del', 'br', 'img'],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'] },
  allowedSchemes: ['http', 'https', 'mailto'],
};

export function renderSingleLine(text: string | null): string {
  if (text === null || text === '') return '';
  return sanitizeHtml(md.renderInline(text), ALLOWED);
}
