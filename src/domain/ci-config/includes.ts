/**
 * `include:` (the Service's Gitlab::Ci::Config::External): `local` (with `*`/`**` wildcards),
 * `project` + `ref` + `file` (one or several), `remote`, `template`, `component` (components.ts), a bare string (a URL is
 * remote, anything else local), each with optional `rules` (`if`, `exists`). Locations expand
 * `$VARIABLES`. Any but `artifact` may pass `inputs:` to the file's `spec: inputs` header (inputs.ts;
 * the same file with other inputs is another include). Files are merged in order, later over earlier, and the including file over all
 * of them (External::Processor); an included file may include others.
 *
 * kiln reaches no network by default: a remote include is fetched only from hosts an
 * administrator lists (KILN_CI_REMOTE_INCLUDE_HOSTS); without them the error names the include
 * and why. Templates are kiln's own (src/domain/templates), or an administrator's file of the same
 * name in KILN_CI_TEMPLATES_DIR.
 */
import picomatch from 'picomatch';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { loadYamlFile } from './load-yaml.ts';
import { interpolateInputs } from './inputs.ts';
import { evaluateExpression, type Variables } from './expression.ts';
import { deepMerge, expandVariables } from './merge.ts';
import { componentContent, type ComponentSources } from './components.ts';
import { changesOf } from './job-entry.ts';

/** Files one pipeline's configuration may include in all (the Service's max_includes). */
export const MAX_INCLUDES = 100;
/** Include depth (a file including a file including …). */
export const MAX_INCLUDE_DEPTH = 100;
/** Bytes of one remote file. */
const MAX_REMOTE_BYTES = 1024 * 1024;
const REMOTE_TIMEOUT_MS = 10_000;

/** A file of another project, and how to read that project's files (its own local includes). */
export type ProjectFile =
  | { content: string; local?: Pick<IncludeSources, 'readLocal' | 'listLocal'> }
  | { error: 'project' | 'ref' | 'file' };

/** Where included files come from; built by the caller for the pipeline's project and commit. */
export interface IncludeSources extends ComponentSources {
  /** A file of the pipeline's own commit, or null. */
  readLocal(path: string): Promise<string | null>;
  /** Every file path of the pipeline's commit (for wildcards and `exists`). */
  listLocal(): Promise<string[]>;
  /** A file of another project the pipeline's user can read, at `ref` (its default branch without). */
  readProject(fullPath: string, ref: string | undefined, file: string): Promise<ProjectFile>;
  /** Hosts (`host` or `host:port`) remote includes may be fetched from. */
  remoteHosts: string[];
  /** A `template:` file (`Bash.gitlab-ci.yml`), or null when there is none of that name. */
  readTemplate(name: string): Promise<string | null>;
  /** How a remote file is requested: the global fetch unless the caller gives another (tests read from memory). */
  fetch?: typeof fetch;
  /** No project stands behind the configuration (instance-level lint): local includes have nothing to read. */
  projectless?: boolean;
  /**
   * Paths the pipeline changes (against `compareTo` when given), or null when there is nothing
   * to compare with; absent where no pipeline is being created (lint), which reads as null.
   */
  changedPaths?(compareTo?: string): Promise<string[] | null>;
}

interface Location {
  kind: 'local' | 'project' | 'remote' | 'template' | 'component';
  location: string;
  project?: string;
  ref?: string;
  rules?: unknown;
  /** `inputs:` for the file's `spec: inputs` header (inputs.ts); undefined when not given. */
  inputs?: unknown;
}

function accessorError(item: unknown): never {
  throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
}

function normalise(value: unknown, vars: Variables): Location[] {
  const items = Array.isArray(value) ? value : [value];
  const out: Location[] = [];
  for (const item of items) {
    if (typeof item === 'string') {
      const loc = expandVariables(item, vars);
      out.push(/^https?:\/\//i.test(loc) ? { kind: 'remote', location: loc } : { kind: 'local', location: loc });
      continue;
    }
    if (!isHash(item)) accessorError(item);
    const accessors = ['local', 'project', 'remote', 'template', 'component', 'artifact'].filter((k) => item[k] !== undefined);
    if (accessors.length !== 1) accessorError(item);
    const allowed = new Set([
      accessors[0], 'rules', ...(accessors[0] === 'artifact' ? [] : ['inputs']), ...(accessors[0] === 'project' ? ['ref', 'file'] : []),
      ...(accessors[0] === 'artifact' ? ['job'] : []),
    ]);
    if (Object.keys(item).some((k) => !allowed.has(k))) accessorError(item);
    const rules = item.rules;
    const inputs = item.inputs === undefined ? {} : { inputs: item.inputs };
    if (accessors[0] === 'artifact') {
      throw new ConfigError(`Include \`${JSON.stringify(item)}\` of a job artifact is only valid in a child pipeline's trigger`);
    }
    if (accessors[0] === 'project') {
      if (typeof item.project !== 'string') accessorError(item);
      const files = Array.isArray(item.file) ? item.file : [item.file];
      if (files.length === 0 || !files.every((f) => typeof f === 'string')) accessorError(item);
      if (item.ref !== undefined && typeof item.ref !== 'string') accessorError(item);
      for (const f of files as string[]) {
        out.push({
          kind: 'project', project: expandVariables(item.project, vars), location: expandVariables(f, vars),
          ...(typeof item.ref === 'string' ? { ref: expandVariables(item.ref, vars) } : {}), rules, ...inputs,
        });
      }
      continue;
    }
    const location = item[accessors[0]];
    if (typeof location !== 'string') accessorError(item);
    out.push({ kind: accessors[0] as Location['kind'], location: expandVariables(location, vars), rules, ...inputs });
  }
  return out;
}

/**
 * include:rules — `if`, `exists` and `changes` (Include::Rules::Rule, the last after 15.2: true,
 * as a job rule's, when the pipeline has nothing to compare with); no rule matching drops the
 * include.
 */
async function includeWanted(rules: unknown, vars: Variables, sources: IncludeSources): Promise<boolean> {
  if (rules === undefined || rules === null) return true;
  if (!Array.isArray(rules)) throw new ConfigError('include rules should be an array of hashes');
  for (const rule of rules) {
    if (!isHash(rule)) throw new ConfigError('include rule should be a hash');
    let ok = true;
    if (rule.if !== undefined) ok = typeof rule.if === 'string' && evaluateExpression(rule.if, vars);
    if (ok && rule.exists !== undefined) {
      const globs = (Array.isArray(rule.exists) ? rule.exists : [rule.exists]).map(String);
      const isMatch = picomatch(globs, { dot: true });
      ok = (await sources.listLocal()).some((p) => isMatch(p));
    }
    if (ok && rule.changes !== undefined && rule.changes !== null) {
      const changes = changesOf(rule.changes, 'include:rules:rule')!;
      const compareTo = changes.compareTo === undefined ? undefined : expandVariables(changes.compareTo, vars);
      const changed = sources.changedPaths ? await sources.changedPaths(compareTo) : null;
      if (changed !== null) {
        const isMatch = picomatch(changes.paths.map((p) => expandVariables(p, vars).replace(/^\/+/, '')), { dot: true });
        ok = changed.some((p) => isMatch(p));
      }
    }
    if (ok) return rule.when !== 'never';
  }
  return false;
}

function hostAllowed(url: URL, hosts: string[]): boolean {
  const host = url.host.toLowerCase();
  return hosts.some((h) => h.toLowerCase() === host || h.toLowerCase() === url.hostname.toLowerCase());
}

async function fetchRemote(location: string, sources: IncludeSources): Promise<string> {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new ConfigError(`Remote file \`${location}\` does not have a valid address!`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`Remote file \`${location}\` does not have a valid address!`);
  }
  if (sources.remoteHosts.length === 0) {
    throw new ConfigError(`Remote file \`${location}\` could not be fetched because no remote hosts are allowed!`);
  }
  if (!hostAllowed(url, sources.remoteHosts)) {
    throw new ConfigError(`Remote file \`${location}\` could not be fetched because its host is not in the allowed remote hosts!`);
  }
  let response: Response;
  try {
    // Redirects are not followed: they could lead to a host that is not allowed.
    response = await (sources.fetch ?? fetch)(url, { redirect: 'manual', signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS) });
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') {
      throw new ConfigError(`Remote file \`${location}\` could not be fetched because of a timeout error!`);
    }
    throw new ConfigError(`Remote file \`${location}\` could not be fetched because of a socket error!`);
  }
  if (response.status >= 300) {
    await response.body?.cancel();
    throw new ConfigError(`Remote file \`${location}\` could not be fetched because of HTTP code \`${response.status}\` error!`);
  }
  // Read at most MAX_REMOTE_BYTES: an allowed host still cannot make kiln buffer a huge body.
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > MAX_REMOTE_BYTES) {
        await reader!.cancel();
        throw new ConfigError(`Remote file \`${location}\` could not be fetched because of HTTP error!`);
      }
      chunks.push(next.value);
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`Remote file \`${location}\` could not be fetched because of a socket error!`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(loc: Location): string {
  return loc.location;
}

/** The file's text, and the sources its own includes read from (another project's for a project include). */
async function contentOf(loc: Location, sources: IncludeSources): Promise<{ text: string; sources: IncludeSources }> {
  if (loc.kind === 'component') {
    const got = await componentContent(loc.location, sources);
    return { text: got.text, sources: { ...sources, ...got.local } };
  }
  if (loc.kind === 'project') {
    const path = loc.location;
    if (!/\.ya?ml$/.test(path)) throw new ConfigError(`Included file \`${path}\` does not have YAML extension!`);
    const got = await sources.readProject(loc.project!, loc.ref, path.replace(/^\/+/, ''));
    if ('content' in got) return { text: got.content, sources: got.local ? { ...sources, ...got.local } : sources };
    if (got.error === 'project') {
      // One literal: test/domain/ci-config/errors.test.ts reads each message from the source whole.
      throw new ConfigError(`Project \`${loc.project}\` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.`);
    }
    if (got.error === 'ref') throw new ConfigError(`Project \`${loc.project}\` reference \`${loc.ref}\` does not exist!`);
    throw new ConfigError(`Project \`${loc.project}\` file \`${path}\` does not exist!`);
  }
  return { text: await textOf(loc, sources), sources };
}

async function textOf(loc: Location, sources: IncludeSources): Promise<string> {
  const path = loc.location;
  if (loc.kind !== 'remote' && loc.kind !== 'template' && !/\.ya?ml$/.test(path)) {
    throw new ConfigError(`Included file \`${path}\` does not have YAML extension!`);
  }
  if (loc.kind === 'local') {
    // External::File::Local#validate_context!.
    if (sources.projectless) throw new ConfigError(`Local file \`${path}\` does not have project!`);
    const text = await sources.readLocal(path.replace(/^\/+/, ''));
    if (text === null) throw new ConfigError(`Local file \`${path}\` does not exist!`);
    return text;
  }
  if (loc.kind === 'remote') return fetchRemote(path, sources);
  // `+` for names such as C++.gitlab-ci.yml.
  if (!/^[\w./+-]+\.gitlab-ci\.yml$/.test(path) || path.split('/').includes('..')) throw new ConfigError(`Template file \`${path}\` is not a valid location!`);
  const text = await sources.readTemplate(path);
  if (text === null) throw new ConfigError(`Included file \`${path}\` is empty or does not exist!`);
  return text;
}

/** Local wildcard locations become one location per matching file, sorted as the tree lists them. */
async function expandWildcards(locs: Location[], sources: IncludeSources): Promise<Location[]> {
  const out: Location[] = [];
  for (const loc of locs) {
    if (loc.kind !== 'local' || !loc.location.includes('*') || sources.projectless) { out.push(loc); continue; }
    const isMatch = picomatch(loc.location.replace(/^\/+/, ''), { dot: true });
    const files = (await sources.listLocal()).filter((p) => isMatch(p));
    if (files.length === 0) throw new ConfigError(`Local file \`${loc.location}\` does not exist!`);
    for (const f of files) out.push({ ...loc, location: f });
  }
  return out;
}

interface State {
  count: number;
  vars: Variables;
  /**
   * Each distinct file text parsed once per configuration: a component included thirty times
   * with other inputs is one YAML parse and thirty interpolations. Nothing after the loader
   * changes a parsed tree (interpolation, merging, extends and references build new hashes), so
   * the includes of one text may share it.
   */
  parsed: Map<string, { header: unknown; content: unknown }>;
}

function key(loc: Location): string {
  // The same file with other inputs is another configuration (it may be included once for each).
  const inputs = loc.inputs === undefined ? '' : `:${JSON.stringify(loc.inputs)}`;
  return `${loc.kind}:${loc.project ?? ''}:${loc.ref ?? ''}:${loc.location.replace(/^\/+/, '')}${inputs}`;
}

async function resolve(root: Hash, state: State, sources: IncludeSources, chain: string[]): Promise<Hash> {
  if (root.include === undefined || root.include === null) return root;
  if (chain.length > MAX_INCLUDE_DEPTH) throw new ConfigError(`Maximum of ${MAX_INCLUDE_DEPTH} nested includes are allowed!`);
  const wanted: Location[] = [];
  for (const loc of normalise(root.include, state.vars)) {
    if (await includeWanted(loc.rules, state.vars, sources)) wanted.push(loc);
  }
  let merged: Hash = Object.create(null) as Hash;
  const seen = new Set<string>();
  for (const loc of await expandWildcards(wanted, sources)) {
    const id = key(loc);
    if (chain.includes(id)) throw new ConfigError(`Include \`${describe(loc)}\` was already included!`);
    // The same file twice in one list is read once.
    if (seen.has(id)) continue;
    seen.add(id);
    if (++state.count > MAX_INCLUDES) throw new ConfigError(`Maximum of ${MAX_INCLUDES} nested includes are allowed!`);
    const { text, sources: nested } = await contentOf(loc, sources);
    let file = state.parsed.get(text);
    if (file === undefined) {
      try {
        file = loadYamlFile(text);
      } catch (err) {
        if (err instanceof ConfigError && err.message === 'The parsed YAML is too big') throw err;
        throw new ConfigError(`Included file \`${describe(loc)}\` does not have valid YAML syntax!`);
      }
      state.parsed.set(text, file);
    }
    if (file.content === null || file.content === undefined) throw new ConfigError(`Included file \`${describe(loc)}\` is empty or does not exist!`);
    let parsed: unknown;
    try {
      parsed = interpolateInputs(file.header, file.content, loc.inputs, state.vars);
    } catch (err) {
      // External::File::Base#load_and_validate_expanded_hash! names the file before the message.
      if (err instanceof ConfigError) throw new ConfigError(`\`${describe(loc)}\`: ${err.message}`);
      throw err;
    }
    if (!isHash(parsed)) throw new ConfigError(`Included file \`${describe(loc)}\` does not have valid YAML syntax!`);
    merged = deepMerge(merged, await resolve(parsed, state, nested, [...chain, id]));
  }
  const own = Object.assign(Object.create(null) as Hash, root);
  delete own.include;
  return deepMerge(merged, own);
}

/** The configuration with every include merged in. */
export async function resolveIncludes(root: Hash, sources: IncludeSources, vars: Variables): Promise<{ config: Hash; includes: number }> {
  const state: State = { count: 0, vars, parsed: new Map() };
  const config = await resolve(root, state, sources, []);
  return { config, includes: state.count };
}
