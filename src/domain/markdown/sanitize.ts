/**
 * The Service's SanitizationFilter for Markdown (lib/banzai/filter/sanitization_filter.rb on top of
 * base_sanitization_filter.rb and html-pipeline's allowlist): raw HTML in the text and the engine's
 * own output keep only these elements and attributes. Everything the later filters add (emoji,
 * task-list checkboxes, heading anchors, reference links, code-block markup) is added after this
 * step, so a text can never forge it.
 *
 * Links take any scheme but `javascript:`, `vbscript:` and `data:` (checked after the scheme is
 * stripped of whitespace and characters no scheme may hold, Gitlab::Utils::SanitizeNodeLink);
 * images and citations take `http`, `https` and relative URLs only, so a `data:` image is dropped.
 */
import sanitizeHtml from 'sanitize-html';

/** html-pipeline's element allowlist plus what base_sanitization_filter.rb and sanitization_filter.rb add. */
const ELEMENTS = [
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'br', 'b', 'i', 'strong', 'em', 'a', 'pre', 'code', 'img', 'tt',
  'div', 'ins', 'del', 'sup', 'sub', 'p', 'ol', 'ul', 'table', 'thead', 'tbody', 'tfoot', 'blockquote',
  'dl', 'dt', 'dd', 'kbd', 'q', 'samp', 'var', 'hr', 'ruby', 'rt', 'rp', 'li', 'tr', 'td', 'th', 's', 'strike',
  'summary', 'details', 'caption', 'figure', 'figcaption', 'abbr', 'bdo', 'cite', 'dfn', 'mark', 'small',
  'span', 'time', 'wbr', 'section',
];

/** html-pipeline's attributes allowed on every element, without `name` (allowed on `a` only) and with `data-sourcepos`. */
const ANY_ELEMENT = [
  'abbr', 'accept', 'accept-charset', 'accesskey', 'action', 'align', 'alt', 'aria-describedby', 'aria-hidden',
  'aria-label', 'aria-labelledby', 'axis', 'border', 'cellpadding', 'cellspacing', 'char', 'charoff', 'charset',
  'checked', 'clear', 'cols', 'colspan', 'color', 'compact', 'coords', 'datetime', 'dir', 'disabled', 'enctype',
  'for', 'frame', 'headers', 'height', 'hreflang', 'hspace', 'ismap', 'label', 'lang', 'maxlength', 'media',
  'method', 'multiple', 'nohref', 'noshade', 'nowrap', 'open', 'progress', 'prompt', 'readonly', 'rel', 'rev',
  'role', 'rows', 'rowspan', 'rules', 'scope', 'selected', 'shape', 'size', 'span', 'start', 'summary',
  'tabindex', 'target', 'title', 'type', 'usemap', 'valign', 'value', 'vspace', 'width', 'itemprop',
  'data-sourcepos',
];

const UNSAFE_SCHEMES = new Set(['javascript', 'vbscript', 'data']);

/**
 * Whether a link's URL names an unsafe scheme, read as a browser would: surrounding whitespace
 * and control characters ignored, then every character no scheme may hold dropped (so
 * `jav&#x09;ascript:` and ` JaVaScRiPt:` count as `javascript:`).
 */
export function unsafeUrl(url: string): boolean {
  const trimmed = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  const colon = trimmed.indexOf(':');
  if (colon < 0) return false;
  const beforeColon = trimmed.slice(0, colon);
  // A `/`, `?` or `#` before the first colon makes it a path, not a scheme.
  if (/[/?#]/.test(beforeColon)) return false;
  return UNSAFE_SCHEMES.has(beforeColon.toLowerCase().replace(/[^a-z+.-]+/g, ''));
}

const TABLE_ALIGNMENT = { 'text-align': [/^(?:center|left|right)$/] };

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ELEMENTS,
  allowedAttributes: {
    '*': ANY_ELEMENT,
    a: ['href', 'name'],
    img: ['src', 'longdesc', 'data-diagram', 'data-diagram-src'],
    div: ['itemscope', 'itemtype'],
    blockquote: ['cite'],
    del: ['cite'],
    ins: ['cite'],
    q: ['cite'],
    abbr: ['title'],
    code: ['data-math-style'],
    pre: ['data-math-style', 'data-mermaid-style', 'data-kroki-style'],
    span: ['data-math-style', 'data-escaped-chars'],
    th: ['style'],
    td: ['style'],
    section: ['data-footnotes'],
  },
  allowedStyles: { th: TABLE_ALIGNMENT, td: TABLE_ALIGNMENT },
  // `href` is checked by the `a` transformer below (any scheme but the unsafe ones).
  allowedSchemes: ['http', 'https'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['src', 'cite', 'longdesc'],
  allowProtocolRelative: true,
  disallowedTagsMode: 'discard',
  // Elements whose text is dropped with them rather than kept as text.
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'template'],
  // Deeper elements are dropped (their text kept): the later steps walk the tree recursively.
  nestingLimit: 100,
  transformTags: {
    a: (tagName, attribs) => {
      const kept = { ...attribs };
      // rel is dropped from links except rel="license" (the Rel-license microformat).
      if (kept.rel !== 'license') delete kept.rel;
      if (kept.href !== undefined && unsafeUrl(kept.href)) delete kept.href;
      return { tagName, attribs: kept };
    },
  },
};

export function sanitizeMarkdownHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
