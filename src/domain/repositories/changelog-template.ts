/**
 * The Service's changelog template language (Gitlab::TemplateParser of 15.2: parser.rb, ast.rb):
 * text, `{{ a.b.0 }}` values, `{% if x %}…{% else %}…{% end %}` and `{% each x %}…{% end %}`
 * blocks, a `%}` eating the line break after it, and a backslash before a line break joining the
 * lines. Nothing in it runs code; loops nest at most MAX_LOOPS deep, as the Service's EvalState
 * allows.
 */

export class TemplateError extends Error {}

type Step = { kind: 'ident'; name: string } | { kind: 'int'; value: number };
type Node =
  | { kind: 'text'; text: string }
  | { kind: 'var'; selector: Step[] }
  | { kind: 'if'; selector: Step[]; yes: Node[]; no: Node[] | null }
  | { kind: 'each'; selector: Step[]; body: Node[] };

export type Template = Node[];

const MAX_LOOPS = 4;

class Parser {
  pos = 0;
  readonly src: string;
  constructor(src: string) {
    this.src = src;
  }

  fail(): never {
    throw new TemplateError(`Failed to parse the template: unexpected input at character ${this.pos + 1}`);
  }

  /** Whitespace, line breaks included (Parslet's `match('\s').repeat`). */
  ws() {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos])) this.pos++;
  }

  selector(): Step[] | null {
    const start = this.pos;
    this.ws();
    const steps: Step[] = [];
    for (;;) {
      const rest = this.src.slice(this.pos);
      const ident = /^[a-zA-Z_]+/.exec(rest);
      const int = ident ? null : /^\d{1,10}/.exec(rest);
      if (ident) steps.push({ kind: 'ident', name: ident[0] });
      else if (int) steps.push({ kind: 'int', value: Number(int[0]) });
      else {
        this.pos = start;
        return null;
      }
      this.pos += (ident ?? int)![0].length;
      if (this.src[this.pos] === '.' && /^[a-zA-Z_\d]/.test(this.src.slice(this.pos + 1))) this.pos++;
      else break;
    }
    this.ws();
    return steps;
  }

  /** `{%` whitespace `word`; the position after it, or null (nothing consumed). */
  tagStart(word: string): boolean {
    const start = this.pos;
    if (!this.src.startsWith('{%', this.pos)) return false;
    this.pos += 2;
    this.ws();
    if (this.src.startsWith(word, this.pos)) {
      this.pos += word.length;
      return true;
    }
    this.pos = start;
    return false;
  }

  /** whitespace `%}` and one line break after it. */
  tagClose(): boolean {
    const start = this.pos;
    this.ws();
    if (!this.src.startsWith('%}', this.pos)) {
      this.pos = start;
      return false;
    }
    this.pos += 2;
    if (this.src[this.pos] === '\n') this.pos++;
    return true;
  }

  /** A bare tag such as `{% end %}` or `{% else %}`. */
  bareTag(word: string): boolean {
    const start = this.pos;
    if (this.tagStart(word) && this.tagClose()) return true;
    this.pos = start;
    return false;
  }

  exprs(): Node[] {
    const nodes: Node[] = [];
    const text = (t: string) => {
      const last = nodes[nodes.length - 1];
      if (last?.kind === 'text') last.text += t;
      else nodes.push({ kind: 'text', text: t });
    };
    for (;;) {
      const start = this.pos;
      if (this.pos >= this.src.length) return nodes;
      const c = this.src[this.pos];
      if (this.src.startsWith('{{', this.pos)) {
        while (this.src[this.pos] === '{') this.pos++;
        const selector = this.selector();
        if (selector && this.src.startsWith('}}', this.pos)) {
          while (this.src[this.pos] === '}') this.pos++;
          nodes.push({ kind: 'var', selector });
          continue;
        }
        this.pos = start;
        return nodes;
      }
      if (this.src.startsWith('{%', this.pos)) {
        const block = this.block();
        if (block) {
          nodes.push(block);
          continue;
        }
        this.pos = start;
        return nodes;
      }
      if (c === '\\') {
        if (this.src[this.pos + 1] === '\n') {
          this.pos += 2;
          continue;
        }
        this.pos++;
        const chars = this.chars();
        if (chars === null) {
          this.pos = start;
          return nodes;
        }
        text(`\\${chars}`);
        continue;
      }
      if (c === '\n') {
        this.pos++;
        text('\n');
        continue;
      }
      const chars = this.chars();
      if (chars === null) return nodes;
      text(chars);
    }
  }

  /** Ordinary characters: no line break, no backslash, no `{` that opens a tag. */
  chars(): string | null {
    const start = this.pos;
    while (this.pos < this.src.length) {
      const c = this.src[this.pos];
      if (c === '\n' || c === '\\') break;
      if (c === '{' && (this.src[this.pos + 1] === '{' || this.src[this.pos + 1] === '%')) break;
      this.pos++;
    }
    return this.pos > start ? this.src.slice(start, this.pos) : null;
  }

  block(): Node | null {
    const start = this.pos;
    for (const kind of ['if', 'each'] as const) {
      this.pos = start;
      if (!this.tagStart(kind)) continue;
      if (!/^[ \t]/.test(this.src.slice(this.pos))) continue;
      const selector = this.selector();
      if (!selector || !this.tagClose()) continue;
      const body = this.exprs();
      let no: Node[] | null = null;
      if (kind === 'if' && this.bareTag('else')) no = this.exprs();
      if (!this.bareTag('end')) continue;
      return kind === 'if' ? { kind, selector, yes: body, no } : { kind, selector, body };
    }
    this.pos = start;
    return null;
  }
}

export function parseTemplate(src: string): Template {
  const p = new Parser(src);
  const nodes = p.exprs();
  if (p.pos < src.length) p.fail();
  return nodes;
}

type Value = unknown;

function select(steps: Step[], data: Value): Value {
  let current = data;
  for (const step of steps) {
    if (current === null || current === undefined) return undefined;
    if (step.kind === 'ident') {
      if (step.name === 'it') continue;
      current = typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, Value>)[step.name] : undefined;
    } else {
      current = Array.isArray(current) ? current[step.value] : undefined;
    }
  }
  return current;
}

/** Ruby's `to_s` of the values a changelog holds. */
function show(v: Value): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Empty strings and collections are false, as the Service's `truthy?`. */
function truthy(v: Value): boolean {
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (v !== null && typeof v === 'object') return Object.keys(v).length > 0;
  return v !== null && v !== undefined && v !== false;
}

function evaluate(nodes: Node[], data: Value, depth: number): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'text') out += n.text;
    else if (n.kind === 'var') out += show(select(n.selector, data));
    else if (n.kind === 'if') {
      if (truthy(select(n.selector, data))) out += evaluate(n.yes, data, depth);
      else if (n.no) out += evaluate(n.no, data, depth);
    } else {
      const values = select(n.selector, data);
      // A hash iterates as [key, value] pairs in Ruby.
      const list = Array.isArray(values) ? values
        : values !== null && typeof values === 'object' ? Object.entries(values) : null;
      if (!list) continue;
      if (depth + 1 > MAX_LOOPS) throw new TemplateError(`You can only nest up to ${MAX_LOOPS} loops`);
      for (const v of list) out += evaluate(n.body, v, depth + 1);
    }
  }
  return out;
}

export function renderTemplate(t: Template, data: Value): string {
  return evaluate(t, data, 0);
}

/** The Service 15.2 default changelog template (lib/gitlab/changelog/template.tpl). */
export const DEFAULT_TEMPLATE = [
  '{% if categories %}',
  '{% each categories %}',
  '### {{ title }} ({% if single_change %}1 change{% else %}{{ count }} changes{% end %})',
  '',
  '{% each entries %}',
  '- [{{ title }}]({{ commit.reference }})\\',
  '{% if author.contributor %} by {{ author.reference }}{% end %}\\',
  '{% if merge_request %} ([merge request]({{ merge_request.reference }})){% end %}',
  '',
  '{% end %}',
  '',
  '{% end %}',
  '{% else %}',
  'No changes.',
  '{% end %}',
  '',
].join('\n');
