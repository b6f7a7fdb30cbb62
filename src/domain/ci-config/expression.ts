/**
 * The CI/CD variable expression language of `rules:if`, `workflow:rules:if`, `include:rules:if`
 * and `only/except:variables` (the Service's Gitlab::Ci::Pipeline::Expression): `$VAR`,
 * "strings" and 'strings', `null`, `/regex/flags`, `==`, `!=`, `=~`, `!~`, `&&`, `||` and
 * parentheses. `&&` binds tighter than `||`; comparisons tighter than both.
 *
 * Values follow Ruby's truthiness while evaluating (only nil and false are false, so `$EMPTY && x`
 * is `x`), and a statement is true when its final value is "present" (not nil, false or empty).
 *
 * Regular expressions run on RE2 semantics (the Service's Gitlab::UntrustedRegexp) through
 * `re2js`, a JavaScript port of RE2 whose matching is linear in the input: a pattern such as
 * `/(a+)+$/` cannot backtrack catastrophically, so a hostile `rules:if` costs microseconds.
 */
import { RE2JS } from 're2js';
import { ConfigError } from './config-error.ts';

/** Characters one expression may have; longer ones are refused as invalid. */
export const MAX_EXPRESSION_LENGTH = 4096;
const MAX_PATTERN_LENGTH = 1024;

type Token =
  | { t: 'var'; name: string }
  | { t: 'str'; value: string }
  | { t: 'null' }
  | { t: 're'; source: string; flags: string }
  | { t: 'op'; op: '==' | '!=' | '=~' | '!~' | '&&' | '||' }
  | { t: '(' } | { t: ')' };

type Expr =
  | { k: 'var'; name: string }
  | { k: 'str'; value: string }
  | { k: 'null' }
  | { k: 're'; source: string; flags: string }
  | { k: 'bin'; op: string; left: Expr; right: Expr };

export class ExpressionError extends Error {}

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) { i++; continue; }
    const rest = text.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\$(\w+)/.exec(rest)) || (m = /^\$\{(\w+)\}/.exec(rest))) { tokens.push({ t: 'var', name: m[1] }); i += m[0].length; continue; }
    if ((m = /^"([^"]*)"/.exec(rest)) || (m = /^'([^']*)'/.exec(rest))) { tokens.push({ t: 'str', value: m[1] }); i += m[0].length; continue; }
    if ((m = /^null\b/.exec(rest))) { tokens.push({ t: 'null' }); i += 4; continue; }
    if ((m = /^(==|!=|=~|!~|&&|\|\|)/.exec(rest))) { tokens.push({ t: 'op', op: m[1] as never }); i += 2; continue; }
    if (c === '(' || c === ')') { tokens.push({ t: c }); i++; continue; }
    if (c === '/') {
      // A pattern ends at the first unescaped slash, followed by its flags (RubySyntax: [ismU]*).
      let j = i + 1;
      while (j < text.length && text[j] !== '/') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new ExpressionError('unterminated pattern');
      const flags = /^[ismU]*/.exec(text.slice(j + 1))![0];
      tokens.push({ t: 're', source: text.slice(i + 1, j), flags });
      i = j + 1 + flags.length;
      continue;
    }
    throw new ExpressionError(`unknown token at ${i}`);
  }
  return tokens;
}

const PRECEDENCE: Record<string, number> = { '==': 3, '!=': 3, '=~': 3, '!~': 3, '&&': 2, '||': 1 };

/** Precedence climbing over the token list; every operator is left-associative. */
function parse(tokens: Token[]): Expr {
  let pos = 0;
  const operand = (): Expr => {
    const tok = tokens[pos++];
    if (!tok) throw new ExpressionError('unexpected end');
    switch (tok.t) {
      case 'var': return { k: 'var', name: tok.name };
      case 'str': return { k: 'str', value: tok.value };
      case 'null': return { k: 'null' };
      case 're': return { k: 're', source: tok.source, flags: tok.flags };
      case '(': {
        const inner = binary(1);
        if (tokens[pos++]?.t !== ')') throw new ExpressionError('unbalanced parenthesis');
        return inner;
      }
      default: throw new ExpressionError('unexpected token');
    }
  };
  const binary = (min: number): Expr => {
    let left = operand();
    for (;;) {
      const tok = tokens[pos];
      if (!tok || tok.t !== 'op' || PRECEDENCE[tok.op] < min) break;
      pos++;
      const right = binary(PRECEDENCE[tok.op] + 1);
      left = { k: 'bin', op: tok.op, left, right };
    }
    return left;
  };
  const tree = binary(1);
  if (pos !== tokens.length) throw new ExpressionError('unexpected token');
  return tree;
}

const compiled = new Map<string, Expr>();

/** Parses (and caches) an expression; throws ExpressionError when it is not valid syntax. */
export function compileExpression(text: string): Expr {
  const hit = compiled.get(text);
  if (hit) return hit;
  if (text.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError('too long');
  const tree = parse(lex(text));
  checkPatterns(tree);
  if (compiled.size > 5000) compiled.clear();
  compiled.set(text, tree);
  return tree;
}

function checkPatterns(e: Expr): void {
  if (e.k === 're') regex(e.source, e.flags);
  if (e.k === 'bin') { checkPatterns(e.left); checkPatterns(e.right); }
}

export function isValidExpression(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    compileExpression(text);
    return true;
  } catch {
    return false;
  }
}

const regexCache = new Map<string, RE2JS>();

function regex(source: string, flags: string): RE2JS {
  const key = `${flags}/${source}`;
  const hit = regexCache.get(key);
  if (hit) return hit;
  if (source.length > MAX_PATTERN_LENGTH) throw new ExpressionError('pattern too long');
  let re: RE2JS;
  try {
    // Flags become RE2's inline flags, as the Service's UntrustedRegexp does.
    re = RE2JS.compile(flags ? `(?${flags})${source}` : source);
  } catch (err) {
    throw new ExpressionError((err as Error).message);
  }
  if (regexCache.size > 5000) regexCache.clear();
  regexCache.set(key, re);
  return re;
}

/** `/pattern/flags` as text (a variable's value on the right of `=~`), or null when it is not one. */
export function patternFromText(text: string): RE2JS | null {
  const m = /^\/(.*)\/([ismU]*)$/s.exec(text);
  if (!m) return null;
  try {
    return regex(m[1], m[2]);
  } catch {
    return null;
  }
}

type Value = string | null | boolean | RE2JS;
export type Variables = ReadonlyMap<string, string>;

function truthy(v: Value): boolean {
  return v !== null && v !== false;
}

function present(v: Value): boolean {
  return truthy(v) && v !== '';
}

function matches(left: Value, right: Value): boolean {
  const text = typeof left === 'string' ? left : '';
  if (right instanceof RE2JS) return right.matcher(text).find();
  if (typeof right === 'string') {
    const re = patternFromText(right);
    return re ? re.matcher(text).find() : text.includes(right);
  }
  return false;
}

function evaluate(e: Expr, vars: Variables): Value {
  switch (e.k) {
    case 'var': return vars.get(e.name) ?? null;
    case 'str': return e.value;
    case 'null': return null;
    case 're': return regex(e.source, e.flags);
    case 'bin': {
      if (e.op === '&&') { const l = evaluate(e.left, vars); return truthy(l) ? evaluate(e.right, vars) : l; }
      if (e.op === '||') { const l = evaluate(e.left, vars); return truthy(l) ? l : evaluate(e.right, vars); }
      const l = evaluate(e.left, vars);
      const r = evaluate(e.right, vars);
      if (e.op === '==') return equal(l, r);
      if (e.op === '!=') return !equal(l, r);
      if (e.op === '=~') return matches(l, r);
      return !matches(l, r);
    }
  }
}

function equal(l: Value, r: Value): boolean {
  if (l instanceof RE2JS || r instanceof RE2JS) return false;
  return l === r;
}

/** Whether an expression holds for these variables; an invalid expression is a ConfigError. */
export function evaluateExpression(text: string, vars: Variables): boolean {
  let tree: Expr;
  try {
    tree = compileExpression(text);
  } catch {
    throw new ConfigError(`invalid expression syntax: ${text.slice(0, 200)}`);
  }
  return present(evaluate(tree, vars));
}
