/**
 * YAML written as the Service writes CI lint's `merged_yaml`: Ruby's `to_yaml` (Psych's YAMLTree
 * choosing a style per value, libyaml's emitter writing it). The emitter below follows libyaml
 * 0.2.5's decisions for the shapes a CI configuration has — block mappings and sequences (a
 * sequence under a key not indented), `[]`/`{}` for empty ones, keys over 128 bytes or spanning
 * lines written as `? key`, and scalars plain, single-quoted, double-quoted or literal (`|`, `|-`,
 * `|+`, `|2`) — with its 80-column line width for plain and quoted scalars.
 *
 * Style per string (Psych's visit_String): a newline before the last character makes a literal
 * block; `y`/`n` are double-quoted; a string starting with a non-word character and no `"` on its
 * line is double-quoted; one that Psych would read back as something else (a number, boolean,
 * null, date, time, symbol) is single-quoted. libyaml then overrides what the text cannot be
 * written in (leading or trailing spaces, indicators, tabs and other non-printable characters).
 *
 * Numbers: kiln's YAML reader does not keep `1.0` apart from `1`, so an integral number is written
 * as an Integer and any other as Ruby's Float#to_s writes it.
 */

const BEST_WIDTH = 80;
const BEST_INDENT = 2;
/** libyaml's limit for a key written inline (`key: value`) rather than as `? key`. */
const MAX_SIMPLE_KEY_BYTES = 128;

type Style = 'plain' | 'single' | 'double' | 'literal';

interface ScalarEvent {
  value: string;
  /** A tag written before the scalar (only Psych's `!!str` for `<<`). */
  tag: string | null;
  plainImplicit: boolean;
  quotedImplicit: boolean;
  style: Style | 'any';
}

interface Analysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

interface NodeContext {
  root: boolean;
  mapping: boolean;
  simpleKey: boolean;
}

const isBreak = (c: string | undefined) => c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';
const isSpace = (c: string | undefined) => c === ' ';
const isBlankOrEnd = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || isBreak(c);

/** libyaml's IS_PRINTABLE, by code point (what it allows unescaped with unicode output on). */
function isPrintable(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return cp === 0x0a || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff);
}

/** yaml_emitter_analyze_scalar, for block context (kiln never writes a non-empty flow collection). */
function analyzeScalar(value: string): Analysis {
  const chars = [...value];
  if (chars.length === 0) return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  let blockIndicators = value.startsWith('---') || value.startsWith('...');
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const followedByWhitespace = isBlankOrEnd(chars[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true;
      if ((c === '?' || c === ':') && followedByWhitespace) blockIndicators = true;
      if (c === '-' && followedByWhitespace) blockIndicators = true;
    } else {
      if (c === ':' && followedByWhitespace) blockIndicators = true;
      if (c === '#' && precededByWhitespace) blockIndicators = true;
    }
    if (!isPrintable(c)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (isSpace(c)) {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankOrEnd(c);
  }
  const out: Analysis = { multiline: lineBreaks, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) out.blockPlainAllowed = false;
  if (trailingSpace) out.blockAllowed = false;
  if (breakSpace) {
    out.blockPlainAllowed = false;
    out.singleQuotedAllowed = false;
  }
  if (spaceBreak || special) {
    out.blockPlainAllowed = false;
    out.singleQuotedAllowed = false;
    out.blockAllowed = false;
  }
  if (lineBreaks) out.blockPlainAllowed = false;
  if (blockIndicators) out.blockPlainAllowed = false;
  return out;
}

/** Ruby's [[:word:]]: letters, marks, decimal digits, connector punctuation. */
const WORD = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]/u;
const lineStarts = (s: string) => {
  const starts = [0];
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) if (i + 1 < s.length) starts.push(i + 1);
  return starts;
};
const lines = (s: string) => s.split('\n');

/** Ruby's `s =~ /^[^[:word:]][^"]*$/` (`^` and `$` at every line). */
function startsWithNonWordLine(s: string): boolean {
  if (s === '') return false;
  for (const p of lineStarts(s)) {
    const c = String.fromCodePoint(s.codePointAt(p)!);
    if (WORD.test(c)) continue;
    const from = p + c.length;
    const quote = s.indexOf('"', from);
    const end = quote === -1 ? s.length : quote;
    if (quote === -1 || s.slice(from, end).includes('\n')) return true;
  }
  return false;
}

/** Ruby's `s =~ /\n(?!\Z)/`: a newline that is not the last character nor the first of a final "\n\n". */
function hasInnerNewline(s: string): boolean {
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) {
    if (i + 1 === s.length) continue;
    if (i + 2 === s.length && s[i + 1] === '\n') continue;
    return true;
  }
  return false;
}

const TIME = /^-?(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt]|\s+)(\d{1,2}):(\d\d):(\d\d)(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$/;
const DATE = /^(\d{4})-(1[012]|0\d|\d)-([12]\d|3[01]|0\d|\d)$/;
const FLOAT = /^(?:[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?)$/;
const INTEGER = /^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$/;
const STRINGISH = /^[^\d.:-]?[\p{Alphabetic}_\s!@#$%^&*(){}<>|/\\~;=]+/u;

const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** Whether Psych's ScalarScanner#tokenize reads `s` back as something other than a String. */
function readsAsNonString(s: string): boolean {
  if (s === '') return true;
  if (s.includes('\n') || lineStarts(s).some((p) => STRINGISH.test(s.slice(p)))) {
    if ([...s].length > 5) return false;
    const ls = lines(s);
    if (lineStarts(s).some((p) => /^[^ytonf~]/i.test(s.slice(p)))) return false;
    if (s === '~' || ls.some((l) => /^null$/i.test(l))) return true;
    if (ls.some((l) => /^(yes|true|on|no|false|off)$/i.test(l))) return true;
    return false;
  }
  const time = TIME.exec(s);
  if (time) {
    // Time.utc refuses a month past 12, a day past 31, an hour past 24, minutes or seconds past 60.
    const [mo, d, h, mi, se] = time.slice(2).map(Number);
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 24 && mi <= 59 && se <= 60;
  }
  const date = DATE.exec(s);
  if (date) {
    // Date.strptime refuses a day the month does not have (and day or month 0).
    const [y, m, d] = date.slice(1).map(Number);
    return m >= 1 && d >= 1 && d <= daysIn(y, m);
  }
  if (/^\+?\.inf$/i.test(s) || /^-\.inf$/i.test(s) || /^\.nan$/i.test(s)) return true;
  if (/^:./.test(s)) return true;
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$/.test(s)) return true;
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}\.[0-9_]*$/.test(s)) return true;
  if (FLOAT.test(s)) return !/^[-+]?\.$/.test(s);
  return INTEGER.test(s);
}

/** Psych's visit_String: the style it asks libyaml for. */
function stringEvent(s: string): ScalarEvent {
  const event: ScalarEvent = { value: s, tag: null, plainImplicit: true, quotedImplicit: true, style: 'plain' };
  if (hasInnerNewline(s)) event.style = 'literal';
  else if (s === '<<') return { value: s, tag: '!!str', plainImplicit: false, quotedImplicit: false, style: 'single' };
  else if (s === 'y' || s === 'n') event.style = 'double';
  else if (startsWithNonWordLine(s)) event.style = 'double';
  else if (readsAsNonString(s) || /^0[0-7]*[89]/.test(s)) event.style = 'single';
  return event;
}

/** Ruby's Float#to_s for a finite, non-integral double (and the special values as Psych writes them). */
export function rubyFloat(x: number): string {
  if (Number.isNaN(x)) return '.nan';
  if (x === Infinity) return '.inf';
  if (x === -Infinity) return '-.inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const decpt = Number(exp) + 1;
  const sign = x < 0 ? '-' : '';
  if (decpt < -3 || decpt > 16) {
    const e = decpt - 1;
    const frac = digits.length > 1 ? digits.slice(1) : '0';
    return `${sign}${digits[0]}.${frac}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

function scalarEvent(value: unknown): ScalarEvent {
  const plainValue = (text: string): ScalarEvent => ({ value: text, tag: null, plainImplicit: true, quotedImplicit: false, style: 'any' });
  if (value === null || value === undefined) return plainValue('');
  if (typeof value === 'boolean') return plainValue(String(value));
  if (typeof value === 'number') return plainValue(Number.isInteger(value) ? String(value) : rubyFloat(value));
  if (typeof value === 'bigint') return plainValue(String(value));
  if (value instanceof Date) return stringEvent(value.toISOString());
  return stringEvent(String(value));
}

const isHashValue = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

class Emitter {
  private out: string[] = [];
  private column = 0;
  private whitespace = true;
  private indention = true;
  private openEnded = 0;
  private indent = -1;
  private indents: number[] = [];

  private write(text: string): void {
    this.out.push(text);
    this.column += [...text].length;
  }

  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }

  private writeBreak(c: string): void {
    this.out.push(c);
    this.column = 0;
  }

  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.write(' ');
    this.write(indicator);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    if (this.column < indent) this.write(' '.repeat(indent - this.column));
    this.whitespace = true;
    this.indention = true;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  dump(value: unknown): string {
    this.writeIndicator('---', true, false, false);
    this.node(value, { root: true, mapping: false, simpleKey: false });
    this.writeIndent();
    if (this.openEnded === 2) {
      this.writeIndicator('...', true, false, false);
      this.openEnded = 0;
      this.writeIndent();
    }
    return this.out.join('');
  }

  private node(value: unknown, ctx: NodeContext): void {
    if (Array.isArray(value)) this.sequence(value, ctx);
    else if (isHashValue(value)) this.mapping(value, ctx);
    else this.scalar(scalarEvent(value), analyzeScalarFor(value), ctx);
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.writeIndicator(close, false, false, false);
  }

  private sequence(items: unknown[], ctx: NodeContext): void {
    if (items.length === 0) return this.emptyFlow('[', ']');
    this.increaseIndent(false, ctx.mapping && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, { root: false, mapping: false, simpleKey: false });
    }
    this.popIndent();
  }

  private mapping(hash: Record<string, unknown>, _ctx: NodeContext): void {
    const entries = Object.entries(hash);
    if (entries.length === 0) return this.emptyFlow('{', '}');
    this.increaseIndent(false, false);
    for (const [key, value] of entries) {
      this.writeIndent();
      const event = stringEvent(key);
      const analysis = analyzeScalar(key);
      const simple = !analysis.multiline && Buffer.byteLength(key) + (event.tag ? event.tag.length : 0) <= MAX_SIMPLE_KEY_BYTES;
      if (simple) {
        this.scalar(event, analysis, { root: false, mapping: true, simpleKey: true });
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.scalar(event, analysis, { root: false, mapping: true, simpleKey: false });
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(value, { root: false, mapping: true, simpleKey: false });
    }
    this.popIndent();
  }

  /** yaml_emitter_select_scalar_style, then the writer for the style (block context, no flow). */
  private scalar(event: ScalarEvent, a: Analysis, ctx: NodeContext): void {
    const noTag = event.tag === null;
    let style: Style = event.style === 'any' ? 'plain' : event.style;
    if (ctx.simpleKey && a.multiline) style = 'double';
    if (style === 'plain') {
      if (!a.blockPlainAllowed) style = 'single';
      if (event.value.length === 0 && ctx.simpleKey) style = 'single';
      if (noTag && !event.plainImplicit) style = 'single';
    }
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || ctx.simpleKey)) style = 'double';
    if (event.tag) {
      if (!this.whitespace) this.write(' ');
      this.write(event.tag);
      this.whitespace = false;
      this.indention = false;
    }
    this.increaseIndent(true, false);
    const allowBreaks = !ctx.simpleKey;
    if (style === 'plain') this.writePlain(event.value, allowBreaks, ctx.root);
    else if (style === 'single') this.writeSingle(event.value, allowBreaks);
    else if (style === 'double') this.writeDouble(event.value, allowBreaks);
    else this.writeLiteral(event.value);
    this.popIndent();
  }

  private writePlain(value: string, allowBreaks: boolean, root: boolean): void {
    const chars = [...value];
    if (!this.whitespace && chars.length > 0) this.write(' ');
    let spaces = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (isSpace(c)) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && !isSpace(chars[i + 1])) this.writeIndent();
        else this.write(c);
        spaces = true;
      } else {
        this.write(c);
        this.indention = false;
        spaces = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
    if (root) this.openEnded = 1;
  }

  private writeSingle(value: string, allowBreaks: boolean): void {
    const chars = [...value];
    this.writeIndicator('\'', true, false, false);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (isSpace(c)) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1 && !isSpace(chars[i + 1])) {
          this.writeIndent();
        } else {
          this.write(c);
        }
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.write(c === '\'' ? '\'\'' : c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    if (breaks) this.writeIndent();
    this.writeIndicator('\'', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeDouble(value: string, allowBreaks: boolean): void {
    const chars = [...value];
    this.writeIndicator('"', true, false, false);
    let spaces = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (!isPrintable(c) || c === '\ufeff' || isBreak(c) || c === '"' || c === '\\') {
        this.write(escapeDouble(c));
        spaces = false;
      } else if (isSpace(c)) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1) {
          this.writeIndent();
          if (isSpace(chars[i + 1])) this.write('\\');
        } else {
          this.write(c);
        }
        spaces = true;
      } else {
        this.write(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(value: string): void {
    const chars = [...value];
    this.writeIndicator('|', true, false, false);
    if (isSpace(chars[0]) || isBreak(chars[0])) this.writeIndicator(String(BEST_INDENT), false, false, false);
    this.openEnded = 0;
    const last = chars[chars.length - 1];
    let chomp = '';
    if (!isBreak(last)) chomp = '-';
    else if (chars.length === 1 || isBreak(chars[chars.length - 2])) {
      chomp = '+';
      this.openEnded = 2;
    }
    if (chomp) this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of chars) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.write(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

function analyzeScalarFor(value: unknown): Analysis {
  return analyzeScalar(scalarEvent(value).value);
}

const ESCAPES: Record<number, string> = {
  0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e',
  0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
};

function escapeDouble(c: string): string {
  const cp = c.codePointAt(0)!;
  const named = ESCAPES[cp];
  if (named) return `\\${named}`;
  const hex = cp.toString(16).toUpperCase();
  if (cp <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

/** `value.to_yaml` as Ruby's Psych writes it. */
export function psychDump(value: unknown): string {
  return new Emitter().dump(value);
}
