/**
 * Markdown to HTML as the Service renders it for `POST /markdown`, notes and descriptions
 * (Banzai.render_and_post_process, lib/banzai/pipeline/): the Markdown engine, the sanitiser, then
 * the filters that add what the text itself cannot (filters.ts, reference-filter.ts).
 *
 * `gfm: true` is the Service's full pipeline: heading anchors, emoji, task lists, references,
 * external-link attributes, code-block markup. `gfm: false` is its plain_markdown pipeline: only
 * the engine, which in the Service is CommonMark with the GFM table, strikethrough and autolink
 * extensions (lib/banzai/filter/markdown_engines/common_mark.rb), so those stay. Both are
 * sanitised: the Service's plain pipeline leaves raw HTML as written, which no caller should
 * have to trust.
 *
 * Not rendered as the Service does: footnotes (no footnote syntax in the engine), math, Mermaid,
 * PlantUML, Kroki, and syntax highlighting (code blocks carry the Service's markup and language
 * but the lines hold plain text); `data-sourcepos` is not emitted (the API's own example,
 * doc/api/markdown.md, shows none).
 */
import markdownIt, { type MarkdownIt, type Token } from 'markdown-it';
import { parseDocument } from 'htmlparser2';
import render from 'dom-serializer';
import { codeBlocks, directions, emoji, externalLinks, headingAnchors, images, taskLists, unwrapStrayItems } from './filters.ts';
import { linkReferences } from './reference-filter.ts';
import type { ReferenceResolver } from './references.ts';
import { sanitizeMarkdownHtml } from './sanitize.ts';

export type {
  AllMembersReference, IssueReference, LabelReference, MergeRequestReference, MilestoneReference, ReferenceResolver, UserReference,
} from './references.ts';

export interface RenderOptions {
  /** The Service's full (GitLab Flavored Markdown) pipeline; plain CommonMark with GFM tables otherwise. */
  gfm: boolean;
  /** Links references the viewer may see; without it (or with `gfm: false`) references stay text. */
  resolveReferences?: ReferenceResolver;
  /** `host[:port]` of this instance: links elsewhere are external (rel nofollow, new window). */
  ownHost?: string | null;
}

/** How deep block and inline Markdown constructs may nest (markdown-it stops nesting past it). */
export const MAX_MARKDOWN_NESTING = 50;

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const WWW_TAIL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*(?::\d{1,5})?(?:[/?#][^\s<]*)?/i;

/**
 * How much after `www.` is the link (GFM's extended www autolink): a domain, port and path, less
 * trailing punctuation and any `)` that closes no `(` of the link.
 */
function wwwLinkLength(tail: string): number {
  const m = WWW_TAIL.exec(tail);
  if (!m) return 0;
  let url = m[0];
  for (;;) {
    let next = url.replace(/[?!.,:*_~'"]+$/, '');
    if (next.endsWith(')') && (next.match(/\)/g) ?? []).length > (next.match(/\(/g) ?? []).length) next = next.slice(0, -1);
    if (next === url) return url.length;
    url = next;
  }
}

function buildEngine(): MarkdownIt {
  const md = markdownIt('default', {
    html: true, linkify: true, typographer: false, breaks: false, xhtmlOut: false, maxNesting: MAX_MARKDOWN_NESTING,
  });
  // GFM's autolink extension: URLs with a scheme, `www.` domains and email addresses; not bare
  // domains.
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: true, fuzzyIP: false });
  md.linkify.add('www.', { validate: (text, pos) => wwwLinkLength(text.slice(pos)), normalize: (match) => { match.url = `http://${match.url}`; } });
  // Every URL reaches the sanitiser, which drops unsafe ones from the link as the Service does
  // (`[x](javascript:…)` renders as a link without href, not as literal text).
  md.validateLink = () => true;
  // The Service's engine: fenced code as `<pre><code lang="…">`, strikethrough as `<del>`,
  // table alignment as `align` (lib/banzai/renderer/common_mark/html.rb, commonmarker).
  md.renderer.rules.fence = (tokens: Token[], idx: number) => {
    const token = tokens[idx];
    const lang = token.info.trim().split(/\s+/)[0] ?? '';
    const attr = lang === '' ? '' : ` lang="${escape(md.utils.unescapeAll(lang))}"`;
    return `<pre><code${attr}>${escape(token.content)}</code></pre>\n`;
  };
  md.renderer.rules.s_open = () => '<del>';
  md.renderer.rules.s_close = () => '</del>';
  md.core.ruler.push('table_align', (state) => {
    for (const token of state.tokens) {
      if (token.type !== 'th_open' && token.type !== 'td_open') continue;
      const style = token.attrGet('style');
      if (typeof style !== 'string') continue;
      token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
      const align = /text-align:\s*(left|right|center)/.exec(style);
      if (align) token.attrSet('align', align[1]);
    }
  });
  return md;
}

const engine = buildEngine();

export async function renderMarkdown(text: string, options: RenderOptions): Promise<string> {
  const doc = parseDocument(sanitizeMarkdownHtml(engine.render(text)));
  unwrapStrayItems(doc);
  if (options.gfm) {
    externalLinks(doc, options.ownHost ?? null);
    images(doc);
    headingAnchors(doc);
    emoji(doc);
    taskLists(doc);
    if (options.resolveReferences) await linkReferences(doc, options.resolveReferences);
    codeBlocks(doc);
  }
  directions(doc);
  return render(doc, { encodeEntities: 'utf8' }).trim();
}
