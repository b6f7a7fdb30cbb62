/**
 * Storage-move test helpers: temporary shard directories for KILN_STORAGES, repositories filled
 * with real commits (git plumbing: several branches and a tag), ref snapshots to compare a
 * repository before and after a move, and polling until moves settle.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { commitFiles } from '../../src/domain/repositories/repositories.ts';

export interface Shards {
  root: string;
  dirs: Record<string, string>;
  /** The KILN_STORAGES value. */
  env: string;
  remove(): Promise<void>;
}

/** One directory per name (created), plus `aliases`: extra names for an existing directory via a symlink. */
export async function makeShards(names: string[], aliases: Record<string, string> = {}): Promise<Shards> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-shards-'));
  const dirs: Record<string, string> = {};
  for (const name of names) {
    dirs[name] = path.join(root, name);
    await fs.mkdir(dirs[name]);
  }
  for (const [alias, target] of Object.entries(aliases)) {
    dirs[alias] = path.join(root, `${alias}-link`);
    await fs.symlink(dirs[target], dirs[alias]);
  }
  return {
    root, dirs,
    env: Object.entries(dirs).map(([n, d]) => `${n}=${d}`).join(','),
    remove: () => fs.rm(root, { recursive: true, force: true }),
  };
}

const author = { name: 'Test Author', email: 'author@example.com' };

/** Commits on main and on a second branch, and a tag: a repository worth comparing ref by ref. */
export async function fillRepository(repo: string, label: string, commits = 3): Promise<void> {
  for (let i = 0; i < commits; i++) {
    await commitFiles(repo, { branch: 'main', files: [{ path: 'README.md', content: `# ${label}\n\nrevision ${i}\n` }, { path: `file-${i}.txt`, content: `${label} ${i}\n`.repeat(20) }], message: `${label} commit ${i}`, author });
  }
  await commitFiles(repo, { branch: `feature-${label}`, files: [{ path: 'feature.txt', content: label }], message: `feature of ${label}`, author });
  git(repo, 'tag', `v1-${label}`, 'main');
}

export function git(gitDir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
}

/** Every ref with its object id, and HEAD. */
export function refs(gitDir: string): string {
  return `${git(gitDir, 'symbolic-ref', 'HEAD').trim()}\n${git(gitDir, 'for-each-ref', '--format=%(objectname) %(refname)')}`;
}

/** Clones (mirror) `source` into a temporary directory and returns its refs, then removes it. */
export async function cloneRefs(source: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-clone-'));
  try {
    execFileSync('git', ['clone', '--quiet', '--mirror', source, path.join(dir, 'c.git')], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
    return refs(path.join(dir, 'c.git'));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(() => true, () => false);
}

/**
 * Calls `check` until it returns a value other than undefined, or fails after `timeoutMs`: a bound
 * on waiting for child servers and background moves, generous because CI machines run loaded.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
