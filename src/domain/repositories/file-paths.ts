/**
 * File paths inside a repository as the API receives them, normalised and checked before they
 * reach git (the Service's Gitlab::Git::Index#normalize_path and its directory-traversal check):
 * leading, trailing and repeated slashes dropped; `.` and `..` components, NUL and other control
 * bytes, and the `.git` directory refused; lengths bounded (PATH_MAX-like for the whole path,
 * NAME_MAX for each component, as a checkout on disk would need).
 */

export const MAX_FILE_PATH_BYTES = 4096;
const MAX_COMPONENT_BYTES = 255;

export type NormalisedPath = { ok: true; path: string } | { ok: false; message: string };

export function normaliseFilePath(raw: string): NormalisedPath {
  if (Buffer.byteLength(raw) > MAX_FILE_PATH_BYTES) return { ok: false, message: 'Path is too long' };
  if (/[\x00-\x1f\x7f]/.test(raw)) return { ok: false, message: 'Path cannot include control characters' };
  const path = raw.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\/+/g, '/');
  if (path === '') return { ok: false, message: 'You must provide a file path' };
  const components = path.split('/');
  if (components.some((c) => c === '..' || c === '.')) return { ok: false, message: 'Path cannot include directory traversal' };
  if (components.some((c) => c.toLowerCase() === '.git')) return { ok: false, message: 'Path cannot include a .git directory' };
  if (components.some((c) => Buffer.byteLength(c) > MAX_COMPONENT_BYTES)) return { ok: false, message: 'Path is too long' };
  return { ok: true, path };
}
