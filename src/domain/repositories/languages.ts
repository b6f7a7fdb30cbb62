/**
 * The languages of a repository (the Service's GET /projects/:id/languages: the project's
 * repository languages as Gitaly's CommitLanguages detects them on the default branch): every
 * file's bytes are counted for the language its name says (languages-table.ts, Linguist's list),
 * leaving out what Linguist leaves out of the statistics (vendored and documentation paths, dot
 * files); the shares are percentages of the counted bytes, rounded to two places, largest first,
 * and only the five largest are kept (Gitlab::LanguageDetection::MAX_LANGUAGES).
 */
import { runGitBytes } from './git-bytes.ts';
import { LANGUAGE_BY_EXTENSION, LANGUAGE_BY_FILENAME } from './languages-table.ts';
import { COMMIT_ID } from './ref-names.ts';
import { cacheKey, remembered } from './repository-cache.ts';

const MAX_LANGUAGES = 5;
const MAX_TREE_BYTES = 64 * 1024 * 1024;

/** Path parts Linguist's vendor.yml and documentation.yml exclude (the common ones). */
const EXCLUDED_DIRS = new Set([
  'vendor', 'vendors', 'node_modules', 'bower_components', 'third_party', 'third-party', '3rdparty', 'deps',
  'dist', 'extern', 'external', 'Godeps', 'Carthage', 'Pods', 'cache',
  'doc', 'docs', 'Doc', 'Docs', 'documentation', 'Documentation', 'examples', 'Examples',
]);

export function languageOf(filePath: string): string | null {
  const parts = filePath.split('/');
  const name = parts[parts.length - 1];
  if (parts.some((p) => p.startsWith('.'))) return null;
  if (parts.slice(0, -1).some((p) => EXCLUDED_DIRS.has(p))) return null;
  if (/\.min\.(js|css)$/.test(name)) return null;
  const byName = LANGUAGE_BY_FILENAME[name];
  if (byName) return byName;
  // The longest extension first: `.d.ts` before `.ts`.
  for (let at = name.indexOf('.', 1); at !== -1; at = name.indexOf('.', at + 1)) {
    const lang = LANGUAGE_BY_EXTENSION[name.slice(at).toLowerCase()];
    if (lang) return lang;
  }
  return null;
}

export interface LanguageShare {
  name: string;
  share: number;
}

/**
 * The languages of `commit`'s tree; for a commit id, kept once counted (repository-cache.ts: the
 * id names the tree for good), so a page for an unchanged branch reads no tree again. The value
 * is shared: never change it.
 */
export async function repositoryLanguages(gitDir: string, commit: string): Promise<LanguageShare[]> {
  if (!COMMIT_ID.test(commit)) return countLanguages(gitDir, commit);
  return remembered(cacheKey('languages', gitDir, commit), () => countLanguages(gitDir, commit));
}

async function countLanguages(gitDir: string, commit: string): Promise<LanguageShare[]> {
  const { stdout } = await runGitBytes(['ls-tree', '-r', '-l', '-z', '--full-tree', commit], { gitDir, maxBytes: MAX_TREE_BYTES });
  const bytes = new Map<string, number>();
  let total = 0;
  for (const record of stdout.toString('utf8').split('\0')) {
    const m = /^\d{6} blob [0-9a-f]{40} +(\d+)\t(.*)$/s.exec(record);
    if (!m) continue;
    const lang = languageOf(m[2]);
    if (!lang) continue;
    const size = Number(m[1]);
    bytes.set(lang, (bytes.get(lang) ?? 0) + size);
    total += size;
  }
  if (total === 0) return [];
  return [...bytes]
    .map(([name, n]) => ({ name, share: Math.round((n / total) * 10000) / 100 }))
    .sort((a, b) => b.share - a.share || (a.name < b.name ? -1 : 1))
    .slice(0, MAX_LANGUAGES);
}
