/**
 * Changelogs from commit trailers (the Service 15.2's Repositories::ChangelogService and
 * Gitlab::Changelog: Config, Release, Generator, Committer; ChangelogCommitsFinder and
 * ChangelogTagFinder). The commits of `from..to` that carry the trailer (`Changelog: added`)
 * become entries under the trailer's category, the commits a newer commit of the range reverts
 * left out; the release section is rendered with the project's template (or the default one) and
 * either answered (GET) or written into the changelog file above the older releases, as one
 * commit through commit-actions.ts (POST).
 *
 * What kiln has no counterpart for: merge requests (no entry links one) and merge-request
 * contributors (no author is a `contributor`, so the default template credits nobody).
 */
import type { Kysely } from 'kysely';
import YAML from 'yaml';
import { RE2JS } from 're2js';
import type { DB } from '../../db/types.ts';
import { runGitBytes } from './git-bytes.ts';
import { branchTips, entryAt, lastCommitFor, listRefs, readBlob, resolveCommit } from './git-read.ts';
import { normaliseFilePath } from './file-paths.ts';
import { readableRevision } from './ref-names.ts';
import { commitActions, type Identity } from './commit-actions.ts';
import type { ProjectRepository, RefUpdate } from './project-repository.ts';
import { DEFAULT_TEMPLATE, parseTemplate, renderTemplate, TemplateError, type Template } from './changelog-template.ts';
import { usernamesByEmail } from './changelog.queries.ts';

/** A changelog that cannot be made: the Service's Gitlab::Changelog::Error (422 with its message). */
export class ChangelogError extends Error {}

export const DEFAULT_TRAILER = 'Changelog';
export const DEFAULT_FILE = 'CHANGELOG.md';
export const DEFAULT_CONFIG_FILE = '.gitlab/changelog_config.yml';

/** Gitlab::Regex.unbounded_semver_regex: what `version` must contain, and what a release header names. */
const SEMVER_SOURCE = '(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)'
  + '(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?'
  + '(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?';
export const SEMVER = new RegExp(SEMVER_SOURCE);
const RELEASE_HEADER = new RegExp(`^##\\s+(${SEMVER_SOURCE})`);

/** Gitlab::Changelog::Config::DEFAULT_TAG_REGEX (RE2 syntax). */
const DEFAULT_TAG_REGEX = '^v?(?P<major>0|[1-9]\\d*)\\.(?P<minor>0|[1-9]\\d*)\\.(?P<patch>0|[1-9]\\d*)'
  + '(?:-(?P<pre>(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))'
  + '?(?:\\+(?P<meta>[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';

const MAX_CONFIG_BYTES = 1024 * 1024;
/** Most bytes of an existing changelog file read and rewritten. */
export const MAX_CHANGELOG_BYTES = 16 * 1024 * 1024;
const COMMITS_PER_PAGE = 1024;
/** A range longer than this is refused rather than walked (the Service walks any range). */
const MAX_RANGE_COMMITS = 200_000;
const MAX_PAGE_BYTES = 64 * 1024 * 1024;

interface Config {
  dateFormat: string;
  categories: Record<string, string>;
  template: Template;
  tagRegex: string;
}

/** Ruby's `to_s` for a YAML scalar used as a category title or a date format. */
function rubyString(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Gitlab::Changelog::Config.from_git: the project's YAML on the default branch, else the defaults. */
async function loadConfig(gitDir: string, defaultCommit: string | null, configFile: string): Promise<Config> {
  const config: Config = { dateFormat: '%Y-%m-%d', categories: {}, template: parseTemplate(DEFAULT_TEMPLATE), tagRegex: DEFAULT_TAG_REGEX };
  const p = normaliseFilePath(configFile);
  if (!defaultCommit || !p.ok) return config;
  const entry = await entryAt(gitDir, defaultCommit, p.path);
  if (!entry || entry.type !== 'blob' || (entry.size ?? 0) > MAX_CONFIG_BYTES) return config;
  let hash: unknown;
  try {
    hash = YAML.parse((await readBlob(gitDir, entry.id, MAX_CONFIG_BYTES)).toString('utf8'));
  } catch (err) {
    throw new ChangelogError(`The changelog configuration is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (hash === null || typeof hash !== 'object' || Array.isArray(hash)) return config;
  const h = hash as Record<string, unknown>;
  if (h.date_format) config.dateFormat = rubyString(h.date_format);
  if (h.template) {
    try {
      config.template = parseTemplate(rubyString(h.template));
    } catch (err) {
      if (err instanceof TemplateError) throw new ChangelogError(err.message);
      throw err;
    }
  }
  if (h.categories) {
    if (typeof h.categories !== 'object' || Array.isArray(h.categories)) {
      throw new ChangelogError('The "categories" configuration key must be a Hash');
    }
    config.categories = Object.fromEntries(Object.entries(h.categories as Record<string, unknown>).map(([k, v]) => [k, rubyString(v)]));
  }
  if (h.tag_regex) config.tagRegex = rubyString(h.tag_regex);
  return config;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Ruby's strftime for the directives a date format uses (in UTC); unknown ones stay as written. */
export function strftime(d: Date, format: string): string {
  const pad = (n: number, w = 2, c = '0') => String(n).padStart(w, c);
  const start = Date.UTC(d.getUTCFullYear(), 0, 1);
  const values: Record<string, (flag: string) => string> = {
    Y: () => String(d.getUTCFullYear()),
    C: (f) => (f === '-' ? String(Math.floor(d.getUTCFullYear() / 100)) : pad(Math.floor(d.getUTCFullYear() / 100))),
    y: (f) => (f === '-' ? String(d.getUTCFullYear() % 100) : pad(d.getUTCFullYear() % 100)),
    m: (f) => (f === '-' ? String(d.getUTCMonth() + 1) : pad(d.getUTCMonth() + 1)),
    d: (f) => (f === '-' ? String(d.getUTCDate()) : pad(d.getUTCDate())),
    e: (f) => (f === '-' ? String(d.getUTCDate()) : pad(d.getUTCDate(), 2, ' ')),
    j: (f) => {
      const day = Math.floor((d.getTime() - start) / 86400000) + 1;
      return f === '-' ? String(day) : pad(day, 3);
    },
    H: (f) => (f === '-' ? String(d.getUTCHours()) : pad(d.getUTCHours())),
    M: (f) => (f === '-' ? String(d.getUTCMinutes()) : pad(d.getUTCMinutes())),
    S: (f) => (f === '-' ? String(d.getUTCSeconds()) : pad(d.getUTCSeconds())),
    B: () => MONTHS[d.getUTCMonth()],
    b: () => MONTHS[d.getUTCMonth()].slice(0, 3),
    h: () => MONTHS[d.getUTCMonth()].slice(0, 3),
    A: () => DAYS[d.getUTCDay()],
    a: () => DAYS[d.getUTCDay()].slice(0, 3),
    u: () => String(d.getUTCDay() === 0 ? 7 : d.getUTCDay()),
    w: () => String(d.getUTCDay()),
    F: () => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`,
    D: () => `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCFullYear() % 100)}`,
    T: () => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`,
    z: () => '+0000',
    Z: () => 'UTC',
    s: () => String(Math.floor(d.getTime() / 1000)),
    '%': () => '%',
  };
  return format.replace(/%([-0^]?)([a-zA-Z%])/g, (all, flag: string, c: string) => {
    const fn = values[c];
    if (!fn) return all;
    const v = fn(flag);
    return flag === '^' ? v.toUpperCase() : v;
  });
}

interface SemverParts {
  nums: number[];
  pre: string[] | null;
  build: string;
}

function semverParts(v: string): SemverParts {
  const m = SEMVER.exec(v);
  if (!m) return { nums: [0, 0, 0], pre: null, build: v };
  return { nums: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : null, build: m[5] ?? '' };
}

/** Orders versions as VersionSorter does for semantic versions: a pre-release before its release. */
export function compareVersions(a: string, b: string): number {
  const x = semverParts(a);
  const y = semverParts(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return x.nums[i] - y.nums[i];
  if (x.pre && !y.pre) return -1;
  if (!x.pre && y.pre) return 1;
  if (x.pre && y.pre) {
    for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
      const p = x.pre[i];
      const q = y.pre[i];
      if (p === undefined) return -1;
      if (q === undefined) return 1;
      const pn = /^\d+$/.test(p);
      const qn = /^\d+$/.test(q);
      if (pn && qn && Number(p) !== Number(q)) return Number(p) - Number(q);
      if (pn !== qn) return pn ? -1 : 1;
      if (p !== q) return p < q ? -1 : 1;
    }
  }
  return x.build === y.build ? 0 : x.build < y.build ? -1 : 1;
}

/**
 * ChangelogTagFinder: the commit of the tag of the last stable release before `version`, the
 * tags' versions read with the configured tag_regex (RE2: its matching is linear, whatever the
 * project wrote). Tags with a pre-release part are skipped.
 */
async function previousTagCommit(gitDir: string, version: string, tagRegex: string): Promise<string | null> {
  let re: RE2JS;
  try {
    re = RE2JS.compile(tagRegex);
  } catch (err) {
    throw new ChangelogError(`The regular expression to use for finding the previous tag for a version is invalid: ${(err as Error).message}`);
  }
  const assemble = (m: Record<string, string | null | undefined>): string | null => {
    if (m.major == null || m.minor == null || m.patch == null) return null;
    return `${m.major}.${m.minor}.${m.patch}${m.meta != null ? `+${m.meta}` : ''}`;
  };
  const groups = (r: RE2JS, s: string): Record<string, string | null> | null => {
    const m = r.matcher(s);
    if (!m.find()) return null;
    const out: Record<string, string | null> = {};
    for (const name of Object.keys(r.namedGroups())) out[name] = m.group(name);
    return out;
  };
  const requestedGroups = groups(RE2JS.compile(DEFAULT_TAG_REGEX), version);
  const requested = requestedGroups ? assemble(requestedGroups) : null;
  if (!requested) {
    throw new ChangelogError('The requested `version` attribute format is not correct. Use formats such as `1.0.0` or `v1.0.0`.');
  }
  let best: { version: string; commit: string } | null = null;
  for (const tag of await listRefs(gitDir, 'refs/tags/')) {
    const g = groups(re, tag.name);
    if (!g || g.pre != null) continue;
    const v = assemble(g);
    if (!v || compareVersions(v, requested) >= 0) continue;
    if (!best || compareVersions(v, best.version) > 0) best = { version: v, commit: tag.commitId };
  }
  return best?.commit ?? null;
}

interface RangeCommit {
  id: string;
  authorEmail: string;
  message: string;
  trailers: Record<string, string>;
}

/** One page of `from..to`, newest first, with each commit's trailers (git's own trailer parser). */
async function rangePage(gitDir: string, from: string, to: string, skip: number): Promise<RangeCommit[]> {
  const { stdout } = await runGitBytes(
    ['log', '-z', '--format=%H%x1f%ae%x1f%(trailers:only,unfold)%x1f%B', `--skip=${skip}`, `--max-count=${COMMITS_PER_PAGE}`,
      '--end-of-options', to, `^${from}`, '--'],
    { gitDir, maxBytes: MAX_PAGE_BYTES },
  );
  return stdout.toString('utf8').split('\0').filter(Boolean).map((record) => {
    const [id, authorEmail, trailerText, ...rest] = record.split('\x1f');
    const trailers: Record<string, string> = {};
    for (const line of trailerText.split('\n')) {
      const at = line.indexOf(': ');
      if (at > 0) trailers[line.slice(0, at)] = line.slice(at + 2);
    }
    return { id, authorEmail, message: rest.join('\x1f'), trailers };
  });
}

/** Commit#title: the first line, cut at a word near 80 characters when it is 100 or longer. */
function commitTitle(message: string): string {
  const full = message.split('\n', 1)[0].trim();
  if (full.length < 100) return full;
  const cut = full.lastIndexOf(' ', 80);
  return `${full.slice(0, cut > 0 ? cut : 80)}…`;
}

const REVERT = /^This reverts commit ([0-9a-f]{40})/im;

export interface ChangelogRequest {
  version: string;
  from?: string;
  to?: string;
  /** The release date (default: now). */
  date?: Date;
  trailer: string;
  configFile: string;
  /** The branch the changelog is for: `to` defaults to it. */
  branch: string;
  defaultBranch: string | null;
  /** `namespace/project`, for the entries' commit references. */
  projectFullPath: string;
}

export interface Release {
  version: string;
  markdown: string;
}

/** The release section (Release#to_markdown), from the commits of the range. */
export async function buildRelease(db: Kysely<DB>, gitDir: string, req: ChangelogRequest): Promise<Release> {
  const defaultCommit = req.defaultBranch ? await resolveCommit(gitDir, `refs/heads/${req.defaultBranch}`) : null;
  const config = await loadConfig(gitDir, defaultCommit, req.configFile);
  const fromRev = req.from ?? null;
  const from = fromRev !== null
    ? (readableRevision(fromRev) ? await resolveCommit(gitDir, fromRev) : null)
    : await previousTagCommit(gitDir, req.version, config.tagRegex);
  if (fromRev === null && !from) {
    throw new ChangelogError('The commit start range is unspecified, and no previous tag could be found to use instead');
  }
  if (!from) throw new ChangelogError(`The commit start range ${fromRev} does not name a commit`);
  const toRev = req.to ?? req.branch;
  const to = readableRevision(toRev) ? await resolveCommit(gitDir, toRev) : null;
  if (!to) throw new ChangelogError(`The commit end range ${toRev} does not name a commit`);

  const entries = new Map<string, { title: string; commit: RangeCommit }[]>();
  for (const title of Object.values(config.categories)) entries.set(title, []);
  const reverted = new Set<string>();
  const picked: { category: string; commit: RangeCommit }[] = [];
  for (let skip = 0; ; skip += COMMITS_PER_PAGE) {
    if (skip >= MAX_RANGE_COMMITS) throw new ChangelogError(`The commit range holds more than ${MAX_RANGE_COMMITS} commits`);
    const page = await rangePage(gitDir, from, to, skip);
    for (const c of page) {
      // Newest first: a commit reverted by a newer commit of the range is left out.
      if (reverted.has(c.id)) continue;
      const description = c.message.slice(c.message.indexOf('\n') + 1);
      const revert = c.message.includes('\n') ? REVERT.exec(description) : null;
      if (revert) reverted.add(revert[1]);
      if (Object.hasOwn(c.trailers, req.trailer)) picked.push({ category: c.trailers[req.trailer], commit: c });
    }
    if (page.length < COMMITS_PER_PAGE) break;
  }
  const users = await usernamesByEmail(db, picked.map((p) => p.commit.authorEmail));
  const rows: Record<string, unknown>[] = [];
  for (const p of picked) {
    const title = config.categories[p.category] ?? p.category;
    if (!entries.has(title)) entries.set(title, []);
    entries.get(title)!.push({ title: commitTitle(p.commit.message), commit: p.commit });
  }
  for (const [title, list] of entries) {
    if (list.length === 0) continue;
    rows.push({
      title, count: list.length, single_change: list.length === 1,
      entries: list.map((e) => {
        const username = users.get(e.commit.authorEmail.toLowerCase());
        return {
          title: e.title,
          commit: { reference: `${req.projectFullPath}@${e.commit.id}`, trailers: e.commit.trailers },
          ...(username ? { author: { reference: `@${username}`, contributor: false, credit: false } } : {}),
        };
      }),
    });
  }
  let body: string;
  try {
    body = renderTemplate(config.template, { categories: rows }).trim();
  } catch (err) {
    if (err instanceof TemplateError) throw new ChangelogError(err.message);
    throw err;
  }
  const date = strftime(req.date ?? new Date(), config.dateFormat);
  return { version: req.version, markdown: `## ${req.version} (${date})\n\n${body}\n\n` };
}

/** Generator#add: the release inserted above the first older release, or appended. */
export function addRelease(existing: string, release: Release): string {
  const lines = existing.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const locations = new Map<string, number>();
  lines.forEach((line, i) => {
    const m = RELEASE_HEADER.exec(line);
    if (m) locations.set(m[1], i);
  });
  const versions = [release.version, ...locations.keys()].sort((a, b) => compareVersions(b, a));
  const after = versions[versions.indexOf(release.version) + 1];
  const out = [...lines];
  if (after !== undefined) {
    out.splice(locations.get(after)!, 0, release.markdown);
  } else {
    if (versions.length > 1) out.push('\n');
    out.push(release.markdown.trimEnd());
    out.push('\n');
  }
  return out.join('');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export type CommitChangelogResult = { ok: true; update: RefUpdate | null } | { ok: false; reason: 'read_only' };

/**
 * Committer#commit: the release written into `file` on `branch` as one commit (created when the
 * file is new), unless the file already has a section for the version; a commit that lost a race
 * with another write to the branch is made again from the new tip, three times at most.
 */
export async function commitRelease(db: Kysely<DB>, repo: ProjectRepository, o: {
  release: Release; file: string; branch: string; message: string; author: Identity;
}): Promise<CommitChangelogResult> {
  const p = normaliseFilePath(o.file);
  if (!p.ok) throw new ChangelogError(p.message);
  const header = new RegExp(`^##\\s*${escapeRegExp(o.release.version)}`, 'm');
  let lastMessage = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const tip = (await branchTips(repo.gitDir, [o.branch])).get(o.branch) ?? null;
    const last = tip ? await lastCommitFor(repo.gitDir, tip, p.path) : null;
    let content: string | null = null;
    if (tip && last) {
      const entry = await entryAt(repo.gitDir, tip, p.path);
      if (entry?.type === 'blob') {
        if ((entry.size ?? 0) > MAX_CHANGELOG_BYTES) throw new ChangelogError(`The changelog file ${p.path} is too large to be changed`);
        content = (await readBlob(repo.gitDir, entry.id, MAX_CHANGELOG_BYTES)).toString('utf8');
      }
    }
    if (content !== null && header.test(content)) return { ok: true, update: null };
    const result = await commitActions(db, repo, {
      branch: o.branch, startBranch: o.branch, force: false, message: o.message, author: o.author, committer: o.author,
      actions: [{
        action: content !== null ? 'update' : 'create', filePath: p.path,
        content: Buffer.from(addRelease(content ?? '', o.release)), lastCommitId: last ?? undefined,
      }],
    });
    if (result.ok) return { ok: true, update: result.update };
    if (result.reason === 'read_only') return result;
    lastMessage = result.message;
  }
  throw new ChangelogError(lastMessage);
}
