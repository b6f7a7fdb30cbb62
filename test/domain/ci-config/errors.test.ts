/**
 * Every refusal of the CI configuration loader, called directly with in-memory files (issue 27,
 * item 5): each case of error-cases.ts must fail with exactly its message, and every message the
 * source of src/domain/ci-config can word must be expected by at least one case, so a new
 * message without a case fails here.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { NO_JOBS, WORKFLOW_FILTERED } from '../../../src/domain/ci-config/parse-ci-config.ts';
import { ALL_ERROR_CASES } from './error-cases.ts';
import { errorOf, load, pipeline } from './memory.ts';

const SOURCE_DIR = path.join(import.meta.dirname, '../../../src/domain/ci-config');

/** A JavaScript string or template literal starting at `start` (its quote): the text, with each `${…}` as null. */
function readLiteral(src: string, start: number): { parts: Array<string | null>; end: number } {
  const quote = src[start];
  const parts: Array<string | null> = [];
  let text = '';
  let i = start + 1;
  while (i < src.length && src[i] !== quote) {
    if (src[i] === '\\') { text += src[i + 1]; i += 2; continue; }
    if (quote === '`' && src.startsWith('${', i)) {
      parts.push(text, null);
      text = '';
      let depth = 1;
      i += 2;
      while (depth > 0) {
        if (src.startsWith('${', i) || src[i] === '{') depth += 1;
        if (src[i] === '}') depth -= 1;
        i += src.startsWith('${', i) ? 2 : 1;
      }
      continue;
    }
    text += src[i];
    i += 1;
  }
  parts.push(text);
  return { parts, end: i + 1 };
}

/** A message of an included file is also expected after the file's name (includes.ts names it). */
function pattern(parts: Array<string | null>): RegExp {
  return new RegExp(`^(?:\`[^\`]+\`: )?${parts.map((p) => (p === null ? '[\\s\\S]*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`);
}

interface Message { where: string; text: string; re: RegExp }

/** Every message given to `new ConfigError(…)` (or job-entry.ts's `bad(…)`) as a literal or a constant holding one. */
function sourceMessages(): { messages: Message[]; dynamic: string[] } {
  const messages: Message[] = [];
  const dynamic: string[] = [];
  for (const file of fs.readdirSync(SOURCE_DIR).filter((f) => f.endsWith('.ts'))) {
    const src = fs.readFileSync(path.join(SOURCE_DIR, file), 'utf8');
    for (const m of src.matchAll(/(?<!function )\b(?:new ConfigError|bad)\(\s*/g)) {
      const at = m.index + m[0].length;
      const where = `${file}:${src.slice(0, at).split('\n').length}`;
      let literalAt = at;
      if (!'`\'"'.includes(src[at])) {
        const name = /^[A-Za-z_$][\w$]*(?=\))/.exec(src.slice(at))?.[0];
        const decl = name === undefined ? null : new RegExp(`const ${name}(?::[^=]+)? = (?=[\`'"])`).exec(src);
        if (!decl) { dynamic.push(`${where} ${src.slice(at, src.indexOf(')', at))}`); continue; }
        literalAt = decl.index + decl[0].length;
      }
      const { parts } = readLiteral(src, literalAt);
      messages.push({ where, text: parts.map((p) => p ?? '…').join(''), re: pattern(parts) });
    }
  }
  return { messages, dynamic };
}

describe('CI configuration errors, called directly', () => {
  for (const [group, cases] of Object.entries(ALL_ERROR_CASES)) {
    describe(group, () => {
      cases.forEach((c, i) => {
        it(`${i + 1}: ${c.error.slice(0, 100)}`, async () => {
          const got = await errorOf(c.pipeline ? pipeline(c.yaml, c.world, c.pipeline) : load(c.yaml, c.world));
          assert.equal(got, c.error, c.yaml.length > 300 ? `${c.yaml.slice(0, 300)}…` : c.yaml);
        });
      });
    });
  }

  it('expects every message src/domain/ci-config can give in at least one case', () => {
    const { messages, dynamic } = sourceMessages();
    assert.ok(messages.length > 150, `only ${messages.length} messages found: has the source's shape changed?`);
    const expected = Object.values(ALL_ERROR_CASES).flat().map((c) => c.error);
    const missing = messages.filter((m) => !expected.some((e) => m.re.test(e))).map((m) => `${m.where} ${m.text}`);
    assert.deepEqual(missing, []);
    // The constants are found through their declarations; what is left are the parser's own words
    // (cases in the yaml group), job-entry.ts's bad(), which passes on the messages counted above, and
    // inputs.ts's list of them joined.
    assert.ok(messages.some((m) => m.re.test(NO_JOBS)) && messages.some((m) => m.re.test(WORKFLOW_FILTERED)));
    const dynamicSites = dynamic.map((d) => d.replace(/:\d+ /, ' ')).sort();
    assert.deepEqual(dynamicSites, ['inputs.ts joined', 'job-entry.ts message', 'load-yaml.ts (err as Error', 'load-yaml.ts message']);
  });
});
