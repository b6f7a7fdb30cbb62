/**
 * `include: component:` (the Service's Ci::Components::FetchService, Components::InstancePath and
 * Ci::Catalog::ComponentsProject, added after 15.2): `<host>/<project full path>/<name>@<version>`
 * where `<host>` is kiln's own (CI_SERVER_FQDN: the external URL's host, with its port when not
 * the protocol's default). The last `/` parts the project's path from the component's name; the
 * file is `templates/<name>.yml`, else `templates/<name>/template.yml`, of that project at the
 * version, read with the pipeline user's permissions. Its own local includes read that project
 * at that commit, as a project include's do.
 *
 * Versions (InstancePath#find_version_sha): `~latest` is the highest released version; `1` or
 * `1.2` the highest released version of that major (and minor); anything else a released tag,
 * a branch, a tag or a commit SHA. The Service takes released versions from its CI/CD catalog;
 * kiln has no catalog, so a project's releases whose tags are semantic versions stand for its
 * catalog versions (a pre-release such as 2.0.0-rc1 is never `~latest`, as the catalog skips
 * them). A project without such a release has no `~latest`: the Service answers "content not
 * found" for a component project without a release (merge request 115756), and so does kiln,
 * rather than guess at an unreleased tag.
 *
 * Messages are the FetchService's, `Component '<address>' - …`. A project that does not exist
 * and one the user may not read answer alike ("project does not exist or you don't have
 * sufficient permissions"): the Service tells them apart, which would tell a caller that a
 * private project exists.
 */
import { ConfigError } from './config-error.ts';

/** A project's files at one commit, for the local includes of a file read from it. */
export interface LocalFiles {
  readLocal(path: string): Promise<string | null>;
  listLocal(): Promise<string[]>;
}

/** What `readComponent` finds: the file and its project's files, or why not. */
export type ComponentFile = { content: string; local: LocalFiles } | { error: 'project' | 'content' };

/** How the loader reaches components: kiln's own host, and the lookup of one component. */
export interface ComponentSources {
  /** CI_SERVER_FQDN: the host (and port) component addresses of this kiln start with. */
  serverFqdn: string;
  /** `templates/<name>.yml` or `templates/<name>/template.yml` of a project the pipeline's user can read, at a version. */
  readComponent(projectPath: string, version: string, name: string): Promise<ComponentFile>;
  projectless?: boolean;
}

export interface ComponentAddress {
  projectPath: string;
  name: string;
  version: string;
}

/** InstancePath::LATEST and SHORTHAND_SEMVER_PATTERN. */
export const LATEST = '~latest';
const SHORTHAND = /^\d+(\.\d+)?$/;
/** semver.org's grammar, without a `v` (the catalog's versions are bare semantic versions). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
/** Bytes of an address: it names a path, a component and a version, each bounded below. */
const MAX_ADDRESS_BYTES = 2048;

function prefix(address: string): string {
  return `Component '${address}' -`;
}

/**
 * The project, name and version of an address on this host, or null when the address is not
 * one (InstancePath.match?: an `@` and the host's prefix). A path without a `/` after the host
 * names no project: `{ projectPath: '' }`, which no project has.
 */
export function parseComponentAddress(address: string, fqdn: string): ComponentAddress | null {
  if (!address.includes('@') || !address.startsWith(`${fqdn}/`) || address.length > MAX_ADDRESS_BYTES) return null;
  const at = address.indexOf('@');
  const instancePath = address.slice(fqdn.length + 1, at);
  const version = address.slice(at + 1);
  const slash = instancePath.lastIndexOf('/');
  if (instancePath.startsWith('/') || slash <= 0) return { projectPath: '', name: instancePath, version };
  return { projectPath: instancePath.slice(0, slash), name: instancePath.slice(slash + 1), version };
}

interface Semver { major: number; minor: number; patch: number; pre: string | null; tag: string }

function semver(tag: string): Semver | null {
  const m = SEMVER.exec(tag);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre: m[4] ?? null, tag };
}

function compare(a: Semver, b: Semver): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** Whether a version is chosen among released versions (`~latest`, `1`, `1.2`) rather than named as a ref. */
export function namesReleasedVersion(version: string): boolean {
  return version === LATEST || SHORTHAND.test(version);
}

/**
 * The released tag a version names by semantic version: the highest release for `~latest`,
 * the highest of that major (and minor) for a shorthand, else null (the version is a ref).
 * Pre-releases are left out, as the catalog's `latest` leaves them out.
 */
export function releasedVersion(version: string, releasedTags: string[]): string | null {
  const wanted = version === LATEST ? null : SHORTHAND.test(version) ? version.split('.').map(Number) : undefined;
  if (wanted === undefined) return null;
  let best: Semver | null = null;
  for (const tag of releasedTags) {
    const v = semver(tag);
    if (v === null || v.pre !== null) continue;
    if (wanted !== null && (v.major !== wanted[0] || (wanted.length > 1 && v.minor !== wanted[1]))) continue;
    if (best === null || compare(v, best) > 0) best = v;
  }
  return best?.tag ?? null;
}

/** The component's file, and the sources its own includes read from. */
export async function componentContent(address: string, sources: ComponentSources): Promise<{ text: string; local: LocalFiles }> {
  // External::File::Component#validate_context!.
  if (sources.projectless) throw new ConfigError('Unable to use components outside of a project context');
  const parsed = parseComponentAddress(address, sources.serverFqdn);
  // Another host, or no version: FetchService's unsupported path (the address names the host).
  if (parsed === null) throw new ConfigError(`${prefix(address)} the component path is not supported`);
  // An empty name or version names no file (the last `/` parts the name, so it has none).
  const got = parsed.name === '' || parsed.version === '' || parsed.projectPath === ''
    ? { error: parsed.projectPath === '' ? 'project' as const : 'content' as const }
    : await sources.readComponent(parsed.projectPath, parsed.version, parsed.name);
  if ('content' in got) return { text: got.content, local: got.local };
  if (got.error === 'project') {
    throw new ConfigError(`${prefix(address)} project does not exist or you don't have sufficient permissions`);
  }
  throw new ConfigError(`${prefix(address)} content not found`);
}
