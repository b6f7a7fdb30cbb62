/**
 * The emoji the status accepts and how a status message is rendered (reference §1.3 UserStatus,
 * §1.9). The Service validates `emoji` against its emoji names and renders `message_html` with its
 * emoji pipeline: the text HTML-escaped, and each `:name:` code or emoji character replaced by
 * `<gl-emoji title="…" data-name="…" data-unicode-version="…">char</gl-emoji>`, with no paragraph
 * around it. Names and characters come from the emoji-datasource package (GitHub/Slack short
 * names, which are the Service's names for the common emoji).
 */
import { createRequire } from 'node:module';
import { CODEPOINTS_BY_UNICODE_VERSION } from './emoji-unicode-versions.ts';

interface DatasourceEmoji {
  name: string;
  unified: string;
  non_qualified: string | null;
  short_name: string;
  short_names: string[];
  added_in: string;
}

export interface Emoji {
  name: string;
  char: string;
  title: string;
  unicodeVersion: string;
}

const VARIATION_SELECTOR = 'FE0F';
const ZERO_WIDTH_JOINER = '200D';

function loadEmoji(): { byName: Map<string, Emoji>; byChar: Map<string, Emoji> } {
  const data = createRequire(import.meta.url)('emoji-datasource/emoji.json') as DatasourceEmoji[];
  const versionOf = new Map<string, string>();
  for (const [version, list] of Object.entries(CODEPOINTS_BY_UNICODE_VERSION)) {
    for (const cp of list.split(' ')) versionOf.set(cp, version);
  }
  const numeric = (v: string) => v.split('.').map(Number);
  const newer = (a: string, b: string) => {
    const [x, y] = [numeric(a), numeric(b)];
    return x[0] !== y[0] ? x[0] > y[0] : x[1] > y[1];
  };
  const byName = new Map<string, Emoji>();
  const byChar = new Map<string, Emoji>();
  for (const e of data) {
    const points = e.unified.split('-');
    // A sequence is as new as its newest code point; characters past the table's Unicode 14 take
    // the emoji's own version (equal to the Unicode version since Emoji 11).
    let version = '0.0';
    for (const cp of points) {
      if (cp === VARIATION_SELECTOR || cp === ZERO_WIDTH_JOINER) continue;
      const v = versionOf.get(cp) ?? e.added_in;
      if (newer(v, version)) version = v;
    }
    const char = String.fromCodePoint(...points.map((p) => parseInt(p, 16)));
    // The rendered name is the word form (`thumbsup`, not `+1`), as the Service names it.
    const name = e.short_names.find((n) => /^[a-z0-9]/.test(n)) ?? e.short_name;
    const emoji: Emoji = { name, char, title: e.name.toLowerCase(), unicodeVersion: version };
    for (const alias of e.short_names) byName.set(alias, emoji);
    byChar.set(char, emoji);
    if (e.non_qualified) byChar.set(String.fromCodePoint(...e.non_qualified.split('-').map((p) => parseInt(p, 16))), emoji);
  }
  return { byName, byChar };
}

const { byName, byChar } = loadEmoji();

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Longest sequences first, so a ZWJ sequence wins over its first character.
const TOKEN = new RegExp(
  `:([a-z0-9_+-]+):|(${[...byChar.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')})`,
  'gu',
);

export function emojiExists(name: string): boolean {
  return byName.has(name);
}

export function findEmoji(name: string): Emoji | undefined {
  return byName.get(name);
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (s: string) => escapeHtml(s).replace(/"/g, '&quot;');

function glEmoji(emoji: Emoji): string {
  return `<gl-emoji title="${escapeAttribute(emoji.title)}" data-name="${escapeAttribute(emoji.name)}" `
    + `data-unicode-version="${emoji.unicodeVersion}">${emoji.char}</gl-emoji>`;
}

/** The Service's emoji pipeline: escaped text with emoji codes and characters as `<gl-emoji>`. */
export function renderEmojiHtml(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    const emoji = m[1] !== undefined ? byName.get(m[1]) : byChar.get(m[2]);
    if (!emoji) continue;
    out += escapeHtml(text.slice(last, m.index)) + glEmoji(emoji);
    last = m.index + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}
