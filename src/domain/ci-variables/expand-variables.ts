/**
 * Variables inside variables, as the Service 15.2 sends them to runners
 * (Ci::BuildRunnerPresenter#runner_variables: `sort_and_expand_all(keep_undefined: true)`):
 * every `$NAME`, `${NAME}` and `%NAME%` in a value is replaced by the value NAME has for the job
 * (the last definition of it, itself expanded), except in raw variables, which go as they are.
 * A reference to a variable the job does not have stays as written (keep_undefined). If the
 * references form a cycle, nothing is expanded, as the Service then leaves the collection alone;
 * kiln does the same when an expanded value would pass 1 MB (references doubling at each level
 * would otherwise grow a payload exponentially).
 *
 * The list keeps its order and length: the runner still applies it first to last.
 */

export interface ExpandableVariable {
  key: string;
  value: string;
  raw?: true;
}

/** ExpandVariables' reference syntax: `$NAME`, `${NAME}` or `%NAME%` (the Windows form). */
const REFERENCE = /\$([a-zA-Z_][a-zA-Z0-9_]*)|\$\{([a-zA-Z_][a-zA-Z0-9_]*)\}|%([a-zA-Z_][a-zA-Z0-9_]*)%/g;

function refName(m: RegExpExecArray | string[]): string {
  return m[1] ?? m[2] ?? m[3];
}

class Cycle extends Error {}
const MAX_EXPANDED = 1_000_000;

export function expandVariables<T extends ExpandableVariable>(list: T[]): T[] {
  const effective = new Map<string, T>();
  for (const v of list) effective.set(v.key, v);
  const expanded = new Map<string, string>();
  const visiting = new Set<string>();

  const expand = (value: string): string => value.replace(REFERENCE, (whole, a?: string, b?: string, c?: string) => {
    const name = refName([whole, a, b, c] as string[]);
    return effective.has(name) ? resolve(name) : whole;
  });
  const resolve = (key: string): string => {
    const known = expanded.get(key);
    if (known !== undefined) return known;
    const v = effective.get(key)!;
    if (v.raw) return v.value;
    if (visiting.has(key)) throw new Cycle(key);
    visiting.add(key);
    const value = expand(v.value);
    if (value.length > MAX_EXPANDED) throw new Cycle(key);
    visiting.delete(key);
    expanded.set(key, value);
    return value;
  };

  try {
    return list.map(
      (v) => (v.raw || !v.value.includes('$') && !v.value.includes('%') ? v : {
        ...v, value: effective.get(v.key) === v ? resolve(v.key) : expand(v.value),
      }),
    );
  } catch (err) {
    if (err instanceof Cycle) return list;
    throw err;
  }
}
