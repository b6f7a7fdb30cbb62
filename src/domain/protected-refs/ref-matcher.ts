/**
 * Which branch or tag names a protected branch or tag covers (the Service's RefMatcher): a name
 * without `*` covers exactly itself; a `*` in a pattern stands for any run of characters, `/`
 * included (`release/*` covers `release/1.0/hotfix`), and the pattern must cover the whole name.
 * Every other character stands for itself.
 */

const compiled = new Map<string, RegExp>();

function wildcardRegExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('.*?');
    re = new RegExp(`^${body}$`);
    // A small cache: the same few patterns are asked about on every push and pipeline.
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

export function isWildcard(pattern: string): boolean {
  return pattern.includes('*');
}

export function refMatches(pattern: string, name: string): boolean {
  return isWildcard(pattern) ? wildcardRegExp(pattern).test(name) : pattern === name;
}
