/**
 * YAML as the Service reads `.gitlab-ci.yml` (Gitlab::Config::Loader::Yaml over Psych): YAML 1.1
 * scalars (`yes`/`no`/`on`/`off` are booleans), a key written twice keeps its last value, merge
 * keys (`<<`), anchors and aliases, and the `!reference [job, key, …]` tag kept as a marker for
 * the normaliser to resolve. A file may start with a header document (`spec:`) before `---`;
 * the configuration is then the second document.
 *
 * Keys written as Ruby symbols (`:script:`) are read as the plain keys (symbolKey).
 *
 * The document tree is converted by hand rather than with `toJS()` so that aliases are counted
 * as they expand: an anchor bomb (aliases of aliases, millions of nodes) stops at MAX_NODES with
 * the Service's "too big" error instead of exhausting memory.
 */
import YAML, { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type Node } from 'yaml';
import { ConfigError, Reference } from './config-error.ts';

/** Nodes a configuration may expand to (aliases counted each time they are used). */
export const MAX_NODES = 200_000;
/** Nesting depth of the expanded tree (the Service's max_yaml_depth is 100). */
export const MAX_DEPTH = 100;
/** Bytes of one configuration file (the Service's max_yaml_size_bytes is 1 MB). */
export const MAX_BYTES = 1024 * 1024;

export { Reference };

interface Budget {
  nodes: number;
  doc: Document;
  /** Each alias's anchored node: the parser finds it by walking the whole document, so once per alias. */
  anchored: Map<Alias, unknown>;
}

function anchoredNode(alias: Alias, budget: Budget): unknown {
  if (!budget.anchored.has(alias)) budget.anchored.set(alias, alias.resolve(budget.doc));
  return budget.anchored.get(alias);
}

/**
 * A key written as a Ruby symbol is the plain key: the Service loads CI YAML permitting Symbol
 * (Gitlab::Config::Loader::Yaml), Psych reads an unquoted scalar of two characters or more that
 * starts with `:` as a symbol (`:name`, or `:"name"` without its quotes; ScalarScanner#tokenize),
 * and load! then symbolizes every key of every hash (deep_symbolize_keys), so `:script` and
 * `script` are one key at every level. A quoted `':script'` is a string, and so stays as written.
 */
function symbolKey(node: Node | null, text: string): string {
  if (!isScalar(node) || node.type !== 'PLAIN' || typeof node.value !== 'string' || !/^:./.test(text) || text.includes('\n')) return text;
  const quoted = /^:(["'])(.*)\1/.exec(text);
  return quoted ? quoted[2].replace(/^:/, '') : text.slice(1);
}

function tooBig(): never {
  throw new ConfigError('The parsed YAML is too big');
}

function convert(node: unknown, budget: Budget, depth: number): unknown {
  if (++budget.nodes > MAX_NODES || depth > MAX_DEPTH) tooBig();
  if (node === null || node === undefined) return null;
  if (isAlias(node)) return convert(anchoredNode(node, budget), budget, depth + 1);
  if (isScalar(node)) {
    if (node.tag === '!reference') throw new ConfigError('!reference should be an array of strings');
    const v = node.value;
    // Psych reads only yes/no/true/false/on/off as booleans, never a lone y or n.
    if (typeof v === 'boolean' && node.type === 'PLAIN' && /^[yn]$/i.test(node.source ?? '')) return node.source;
    return typeof v === 'symbol' ? '<<' : v;
  }
  if (isSeq(node)) {
    const items = node.items.map((item) => convert(item, budget, depth + 1));
    if (node.tag === '!reference') {
      if (!items.every((i) => typeof i === 'string' || typeof i === 'number')) {
        throw new ConfigError('!reference should be an array of strings');
      }
      return new Reference(items.map(String));
    }
    return items;
  }
  if (isMap(node)) {
    const own: Record<string, unknown> = {};
    const merged: Record<string, unknown> = {};
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const isMerge = isScalar(keyNode) && (typeof keyNode.value === 'symbol' || (keyNode.value === '<<' && keyNode.type === 'PLAIN'));
      if (isMerge) {
        const source = convert(pair.value, budget, depth + 1);
        // Earlier sources win over later ones; the map's own keys win over all (YAML merge key spec).
        for (const s of Array.isArray(source) ? source : [source]) {
          if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new ConfigError('Merge sources must be maps or map aliases');
          for (const [k, v] of Object.entries(s)) if (!Object.hasOwn(merged, k)) merged[k] = v;
        }
        continue;
      }
      const key = convert(keyNode, budget, depth + 1);
      const name = key === null ? '' : typeof key === 'object' ? JSON.stringify(key) : symbolKey(keyNode, String(key));
      // A key written twice: the last one wins, as Psych reads it.
      own[name] = convert(pair.value, budget, depth + 1);
    }
    return Object.assign(Object.create(null) as Record<string, unknown>, merged, own);
  }
  return null;
}

function firstError(doc: Document): string | null {
  const err = doc.errors[0];
  return err ? err.message.split('\n')[0].replace(/:$/, '') : null;
}

/** Parses one configuration file; throws ConfigError with the parser's words. */
export function loadYaml(text: string): unknown {
  return loadYamlFile(text).content;
}

/**
 * One file's configuration document, and its `spec:` header document when it has one (undefined
 * when not), for inputs.ts to check and interpolate.
 */
export function loadYamlFile(text: string): { header: unknown; content: unknown } {
  if (Buffer.byteLength(text) > MAX_BYTES) tooBig();
  let docs: Document[];
  try {
    const parsed = YAML.parseAllDocuments(text, { version: '1.1', uniqueKeys: false, prettyErrors: false, strict: false });
    if (!Array.isArray(parsed)) return { header: undefined, content: null };
    docs = parsed as Document[];
  } catch (err) {
    throw new ConfigError((err as Error).message.split('\n')[0]);
  }
  for (const d of docs) {
    const message = firstError(d);
    if (message) throw new ConfigError(message);
  }
  if (docs.length === 0) return { header: undefined, content: null };
  let doc = docs[0];
  let header: unknown;
  if (docs.length > 1) {
    // A header document (`spec: inputs`) precedes the configuration.
    const first = convert(doc.contents, { nodes: 0, doc, anchored: new Map() }, 0);
    if (first !== null && typeof first === 'object' && !Array.isArray(first) && Object.keys(first).every((k) => k === 'spec')) {
      header = first;
      doc = docs[1];
    }
  }
  return { header, content: convert(doc.contents, { nodes: 0, doc, anchored: new Map() }, 0) };
}
