/**
 * WikiPageBasic, WikiPage and WikiAttachment (the Service's API::Entities 15.2): a page's format,
 * slug and title; with its content (raw, or rendered when `render_html`) and the content's
 * encoding; an attachment's name, path in the wiki repository, branch and Markdown link.
 */
import { Type, type Static } from 'typebox';
import type { WikiPage } from '../../domain/wikis/wiki-pages.ts';
import { markdownLink } from '../../domain/uploads/markdown-link.ts';

export const WikiPageBasicSchema = Type.Object({
  format: Type.String(),
  slug: Type.String(),
  title: Type.String(),
}, { title: 'WikiPageBasic' });

export const WikiPageSchema = Type.Object({
  ...WikiPageBasicSchema.properties,
  content: Type.String(),
  encoding: Type.String(),
}, { title: 'WikiPage' });

export const WikiAttachmentSchema = Type.Object({
  file_name: Type.String(),
  file_path: Type.String(),
  branch: Type.String(),
  link: Type.Object({ url: Type.String(), markdown: Type.String() }),
}, { title: 'WikiAttachment' });

export function presentWikiPageBasic(page: WikiPage): Static<typeof WikiPageBasicSchema> {
  return { format: page.format, slug: page.slug, title: page.title };
}

/** The content's text and the name of its encoding (Ruby's: UTF-8, or binary bytes as ASCII-8BIT). */
export function pageText(page: WikiPage): { text: string; encoding: string } {
  const bytes = page.content ?? Buffer.alloc(0);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'UTF-8' };
  } catch {
    return { text: bytes.toString('latin1'), encoding: 'ASCII-8BIT' };
  }
}

/** `html`: the rendered content in place of the raw one (render_html). */
export function presentWikiPage(page: WikiPage, html?: string): Static<typeof WikiPageSchema> {
  const { text, encoding } = pageText(page);
  return { ...presentWikiPageBasic(page), content: html ?? text, encoding };
}

export function presentWikiAttachment(a: { fileName: string; filePath: string; branch: string }): Static<typeof WikiAttachmentSchema> {
  return {
    file_name: a.fileName, file_path: a.filePath, branch: a.branch,
    link: { url: a.filePath, markdown: markdownLink(a.fileName, a.filePath) },
  };
}
