/**
 * The Service's Banzai filters that run after sanitising (lib/banzai/pipeline/gfm_pipeline.rb), over
 * the sanitised tree: what they add cannot come from the text itself.
 */
import { parseDocument } from 'htmlparser2';
import { renderEmojiHtml } from '../user-status/emoji.ts';
import {
  addClass, el, elements, insertAt, isElement, replaceWith, Text, textContent, textNodes, type ChildNode, type Element,
  type ParentNode,
} from './dom.ts';

const LISTS = new Set(['ul', 'ol']);
const TABLE_PARTS = new Set(['thead', 'tbody', 'tfoot', 'tr', 'td', 'th']);

function hasAncestor(e: Element, names: ReadonlySet<string>): boolean {
  for (let p = e.parent; p; p = p.parent) if (isElement(p) && names.has(p.name)) return true;
  return false;
}

/**
 * html-pipeline's sanitizer transformers: a list item outside a list and table parts outside a
 * table are unwrapped (their content kept), since they could break out of the page around them.
 */
export function unwrapStrayItems(root: ParentNode): void {
  for (const e of elements(root)) {
    const parent = e.parent;
    const stray = (e.name === 'li' && !(parent && isElement(parent) && LISTS.has(parent.name)))
      || (TABLE_PARTS.has(e.name) && !hasAncestor(e, new Set(['table'])));
    if (stray) replaceWith(e, [...e.children]);
  }
}

/**
 * TableOfContentsFilter: each heading gets an anchor whose id is its text lowercased, without
 * punctuation, spaces as dashes; a repeated id takes `-1`, `-2`, … .
 */
export function headingAnchors(root: ParentNode): void {
  const seen = new Map<string, number>();
  for (const h of elements(root)) {
    if (!/^h[1-6]$/.test(h.name) || h.children.length === 0) continue;
    const id = textContent(h).trim().toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-')
      .replace(/-{2,}/g, '-');
    if (id === '') continue;
    const count = seen.get(id) ?? 0;
    seen.set(id, count + 1);
    const href = count > 0 ? `${id}-${count}` : id;
    insertAt(h, 0, [el('a', { id: `user-content-${href}`, class: 'anchor', href: `#${href}`, 'aria-hidden': 'true' })]);
  }
}

/** EmojiFilter: `:name:` codes and emoji characters become `<gl-emoji>`, except in code. */
export function emoji(root: ParentNode): void {
  for (const t of textNodes(root, new Set(['pre', 'code', 'tt', 'gl-emoji']))) {
    if (!/:|[^\u0000-\u007f]/.test(t.data)) continue;
    const html = renderEmojiHtml(t.data);
    if (!html.includes('<gl-emoji')) continue;
    replaceWith(t, [...parseDocument(html).children]);
  }
}

const TASK = /^\[([ xX])\](?=\s)/;

function firstText(parent: ParentNode): Text | null {
  for (const c of parent.children) {
    if (c instanceof Text) {
      if (c.data.trim() === '') continue;
      return c;
    }
    if (isElement(c) && c.name === 'p') return firstText(c);
    return null;
  }
  return null;
}

/**
 * TaskListFilter: a list item starting with `[ ]` or `[x]` gets a disabled checkbox in place of the
 * marker; the item is a `task-list-item` and its list a `task-list`.
 */
export function taskLists(root: ParentNode): void {
  for (const li of elements(root)) {
    if (li.name !== 'li') continue;
    const text = firstText(li);
    const m = text ? TASK.exec(text.data) : null;
    if (!text || !m) continue;
    const input: Record<string, string> = { type: 'checkbox', class: 'task-list-item-checkbox' };
    if (m[1] !== ' ') input.checked = '';
    input.disabled = '';
    text.data = text.data.slice(m[0].length);
    const holder = text.parent!;
    insertAt(holder, holder.children.indexOf(text), [el('input', input)]);
    addClass(li, 'task-list-item');
    if (li.parent && isElement(li.parent) && !(li.parent.attribs.class ?? '').split(' ').includes('task-list')) {
      addClass(li.parent, 'task-list');
    }
  }
}

/** A language name as it may appear in a class and an attribute. */
function languageOf(code: Element, pre: Element): string {
  const given = (code.attribs.lang ?? pre.attribs.lang ?? '').trim().toLowerCase();
  return /^[a-z0-9_+#.-]{1,64}$/.test(given) ? given : 'plaintext';
}

/**
 * SyntaxHighlightFilter's markup for fenced and indented code: the block's language as class and
 * `lang`, one `<span class="line">` per line. kiln has no highlighter: the lines hold plain text.
 */
export function codeBlocks(root: ParentNode): void {
  for (const pre of elements(root)) {
    if (pre.name !== 'pre') continue;
    if (pre.attribs['data-math-style'] || pre.attribs['data-mermaid-style'] || pre.attribs['data-kroki-style']) continue;
    const code = pre.children.find((c): c is Element => isElement(c) && c.name === 'code');
    if (!code) continue;
    const lang = languageOf(code, pre);
    const lines = textContent(code).replace(/\n$/, '').split('\n');
    const body: ChildNode[] = [];
    lines.forEach((line, i) => {
      if (i > 0) body.push(new Text('\n'));
      body.push(el('span', { id: `LC${i + 1}`, class: 'line', lang }, line === '' ? [] : [new Text(line)]));
    });
    const attribs: Record<string, string> = {};
    for (const [k, v] of Object.entries(pre.attribs)) if (k !== 'lang') attribs[k] = v;
    replaceWith(pre, [el('pre', {
      ...attribs, class: `code highlight js-syntax-highlight language-${lang}`, lang, 'v-pre': 'true',
    }, [el('code', {}, body)])]);
  }
}

/**
 * ExternalLinkFilter: a link to another host opens in a new window without referrer or
 * search-engine credit.
 */
export function externalLinks(root: ParentNode, ownHost: string | null): void {
  for (const a of elements(root)) {
    if (a.name !== 'a' || a.attribs.href === undefined) continue;
    let url: URL;
    try {
      url = new URL(a.attribs.href);
    } catch {
      continue;
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.host === ownHost) continue;
    a.attribs.rel = 'nofollow noreferrer noopener';
    a.attribs.target = '_blank';
  }
}

/** A transparent GIF: ImageLazyLoadFilter's placeholder while the real image loads. */
const PLACEHOLDER_IMAGE = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';

/**
 * ImageLazyLoadFilter and ImageLinkFilter: an image loads lazily (its URL in `data-src`) and,
 * unless already in a link, links to itself.
 */
export function images(root: ParentNode): void {
  for (const img of elements(root)) {
    if (img.name !== 'img' || !img.attribs.src) continue;
    const src = img.attribs.src;
    img.attribs.class = img.attribs.class ? `${img.attribs.class} lazy` : 'lazy';
    img.attribs['data-src'] = src;
    img.attribs.src = PLACEHOLDER_IMAGE;
    if (hasAncestor(img, new Set(['a']))) continue;
    const link = el('a', { class: 'no-attachment-icon', href: src, target: '_blank', rel: 'noopener noreferrer' });
    replaceWith(img, [link]);
    insertAt(link, 0, [img]);
  }
}

const DIRECTED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'blockquote', 'table', 'dl']);

/** Top-level text blocks take `dir="auto"`, so right-to-left text lays out right to left. */
export function directions(root: ParentNode): void {
  for (const c of root.children) {
    if (isElement(c) && DIRECTED.has(c.name) && c.attribs.dir === undefined) c.attribs.dir = 'auto';
  }
}
