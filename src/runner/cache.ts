/**
 * The job cache kept on the runner's host (the Service's runner with no shared cache server):
 * `<cache_dir>/<project path>/<key>/cache.zip`, restored before the script when the policy pulls
 * (trying `fallback_keys` in order when the key has none) and saved after it when the policy
 * pushes and `when` matches the job's result. The key comes from the server already computed
 * (`key:files` is resolved there); keys that could leave the cache directory are refused.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { CacheSpec } from './job-response.ts';
import { collectFiles, extractZip, writeZip } from './archive.ts';

export function cacheFile(cacheDir: string, projectPath: string, key: string): string | null {
  // The Service refuses keys with / (or that are "." or ".."); the project path is the server's.
  if (key === '' || key === '.' || key === '..' || /[/\\\0]/.test(key) || key.length > 255) return null;
  if (projectPath.split('/').some((s) => s === '' || s === '.' || s === '..')) return null;
  return path.join(cacheDir, projectPath, key, 'cache.zip');
}

const pulls = (c: CacheSpec) => !c.policy || c.policy === 'pull-push' || c.policy === 'pull';
const pushes = (c: CacheSpec) => !c.policy || c.policy === 'pull-push' || c.policy === 'push';

export async function restoreCaches(o: {
  caches: CacheSpec[]; cacheDir: string; projectPath: string; projectDir: string; notice: (t: string) => void; warn: (t: string) => void;
}): Promise<void> {
  for (const c of o.caches) {
    if (!pulls(c)) {
      o.notice(`Not downloading cache ${c.key ?? 'default'} due to policy`);
      continue;
    }
    let restored = false;
    for (const key of [c.key || 'default', ...(c.fallback_keys ?? [])]) {
      const file = cacheFile(o.cacheDir, o.projectPath, key);
      if (!file) {
        o.warn(`cache key ${JSON.stringify(key)} is not allowed`);
        continue;
      }
      o.notice(`Checking cache for ${key}...`);
      if (!await fsp.stat(file).catch(() => null)) continue;
      try {
        await extractZip(file, o.projectDir);
      } catch (err) {
        // As the Service's runner: a cache that cannot be restored is a warning, not a failure.
        o.warn(`extracting the cache ${key} failed: ${(err as Error).message}`);
        continue;
      }
      o.notice(`Successfully extracted cache`);
      restored = true;
      break;
    }
    if (!restored) o.warn(`file does not exist; cache not restored for ${c.key || 'default'}`);
  }
}

export async function saveCaches(o: {
  caches: CacheSpec[]; success: boolean; cacheDir: string; projectPath: string; projectDir: string;
  notice: (t: string) => void; warn: (t: string) => void;
}): Promise<void> {
  for (const c of o.caches) {
    const when = c.when || 'on_success';
    if (!pushes(c)) {
      o.notice(`Not uploading cache ${c.key || 'default'} due to policy`);
      continue;
    }
    if (!(when === 'always' || (when === 'on_success') === o.success)) continue;
    const key = c.key || 'default';
    const file = cacheFile(o.cacheDir, o.projectPath, key);
    if (!file) {
      o.warn(`cache key ${JSON.stringify(key)} is not allowed`);
      continue;
    }
    o.notice(`Creating cache ${key}...`);
    const files = await collectFiles(o.projectDir, { paths: c.paths, untracked: c.untracked }, o.warn);
    if (files.length === 0) {
      o.warn('No files to cache');
      continue;
    }
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeZip(o.projectDir, files, tmp);
    await fsp.rename(tmp, file);
    o.notice(`Created cache`);
  }
}
