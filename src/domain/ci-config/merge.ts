/**
 * The two operations the configuration is built with: deep merge (hashes merge key by key,
 * anything else — arrays included — is replaced, as Ruby's Hash#deep_merge does for includes,
 * `extends` and `default:`), and `$VAR` / `${VAR}` expansion (the Service's ExpandVariables).
 * Hashes are made without a prototype so a key named `__proto__` is just a key.
 */
import { isHash, type Hash } from './config-error.ts';
import type { Variables } from './expression.ts';

export function newHash(): Hash {
  return Object.create(null) as Hash;
}

export function deepMerge(base: Hash, over: Hash): Hash {
  const out = Object.assign(newHash(), base);
  for (const [k, v] of Object.entries(over)) {
    const current = out[k];
    out[k] = isHash(v) && isHash(current) ? deepMerge(current, v) : v;
  }
  return out;
}

/** `$VAR`, `${VAR}` (and `%VAR%`) replaced by their values; unknown ones by nothing. */
export function expandVariables(text: string, vars: Variables, keepUnknown = false): string {
  return text.replace(/\$\$|\$(\w+)|\$\{(\w+)\}|%(\w+)%/g, (whole, a?: string, b?: string, c?: string) => {
    if (whole === '$$') return whole;
    const name = a ?? b ?? c!;
    const value = vars.get(name);
    if (value === undefined) return keepUnknown || c !== undefined ? whole : '';
    return value;
  });
}
