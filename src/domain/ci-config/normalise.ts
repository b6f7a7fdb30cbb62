/**
 * After includes are merged, before keywords are read (the Service's Config#expand_config order):
 * `extends:` (Config::Extendable: deep merge of the bases, deepest first, at most 10 ancestors),
 * then `!reference [key, …]` tags (Config::Yaml::Tags::Resolver), which see the extended jobs.
 */
import { ConfigError, isHash, Reference, type Hash } from './config-error.ts';
import { deepMerge } from './merge.ts';

/** Ancestors one `extends` chain may have (Extendable::Entry::MAX_NESTING_LEVELS). */
export const MAX_EXTENDS_DEPTH = 10;
/** References a reference may go through (Tags::Reference::MAX_NESTING_LEVELS). */
const MAX_REFERENCE_DEPTH = 10;

/** The keys `extends:` names; `extends: null` names none (Extendable::Entry#extends_keys reads it with Array()). */
function extendsList(value: unknown): unknown[] {
  if (value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function extendOne(key: string, root: Hash, done: Set<string>, ancestors: string[]): Hash {
  const value = root[key] as Hash;
  if (done.has(key) || value.extends === undefined) return value;
  if (ancestors.includes(key)) throw new ConfigError(`\`${key}\`: circular dependency detected in \`extends\``);
  if (ancestors.length >= MAX_EXTENDS_DEPTH) throw new ConfigError(`\`${key}\`: nesting too deep in \`extends\``);
  const parents = extendsList(value.extends);
  const unknown = parents.filter((p) => typeof p !== 'string' || root[p] === undefined);
  if (unknown.length > 0) throw new ConfigError(`\`${key}\`: unknown keys in \`extends\` (${unknown.map(String).join(', ')})`);
  const invalid = parents.filter((p) => !isHash(root[p as string]));
  if (invalid.length > 0) throw new ConfigError(`\`${key}\`: invalid base hashes in \`extends\` (${invalid.join(', ')})`);
  let merged: Hash = Object.create(null) as Hash;
  for (const parent of parents as string[]) {
    merged = deepMerge(merged, extendOne(parent, root, done, [...ancestors, key]));
  }
  // The job keeps its `extends:` (Extendable merges into the job's own hash), as lint's merged_yaml shows.
  const own = deepMerge(merged, value);
  root[key] = own;
  done.add(key);
  return own;
}

/** Every top-level hash with `extends:` replaced by its merged form. */
export function resolveExtends(root: Hash): Hash {
  const out = Object.assign(Object.create(null) as Hash, root);
  const done = new Set<string>();
  for (const [key, value] of Object.entries(out)) {
    if (isHash(value) && value.extends !== undefined && key !== 'default' && key !== 'workflow' && key !== 'variables') {
      extendOne(key, out, done, []);
    }
  }
  return out;
}

function lookup(root: Hash, ref: Reference): unknown {
  let node: unknown = root;
  for (const part of ref.path) {
    if (!isHash(node) || !Object.hasOwn(node, part)) {
      throw new ConfigError(`!reference ${JSON.stringify(ref.path).replace(/,/g, ', ')} could not be found`);
    }
    node = node[part];
  }
  return node;
}

function resolveNode(node: unknown, root: Hash, depth: number, budget: { n: number }): unknown {
  if (++budget.n > 500_000) throw new ConfigError('The parsed YAML is too big');
  if (node instanceof Reference) {
    if (depth >= MAX_REFERENCE_DEPTH) throw new ConfigError(`!reference ${JSON.stringify(node.path).replace(/,/g, ', ')} is part of a circular chain`);
    return resolveNode(lookup(root, node), root, depth + 1, budget);
  }
  if (Array.isArray(node)) return node.map((n) => resolveNode(n, root, depth, budget));
  if (isHash(node)) {
    const out = Object.create(null) as Hash;
    for (const [k, v] of Object.entries(node)) out[k] = resolveNode(v, root, depth, budget);
    return out;
  }
  return node;
}

/** Every `!reference` replaced by the value it points to. */
export function resolveReferences(root: Hash): Hash {
  return resolveNode(root, root, 0, { n: 0 }) as Hash;
}
