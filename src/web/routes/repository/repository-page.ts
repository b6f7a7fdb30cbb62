/**
 * What every repository page starts with: the project's repository as the API's repository
 * routes find it (download_code, else the same 404 as a hidden project: the Service's
 * Projects::ApplicationController answers 404 for a missing ability), and the split of a
 * `:ref/*path` address into a ref and a path. A ref may hold slashes (`feature/x`), so the
 * longest leading run of segments that names a commit is the ref, as the Service's
 * ExtractsRef does; every candidate is resolved in one git process.
 */
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { resolveCommits } from '../../../domain/repositories/git-read.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { pathHref } from '../../components/lists.ts';

/** Refs deeper than this many segments are not tried (git's own refs are far shorter). */
const MAX_REF_SEGMENTS = 16;

export interface RepositoryPage {
  gitDir: string;
  /** `/<namespace…>/<project>` as a link. */
  base: string;
}

export function repositoryOf(p: ProjectPageRequest): RepositoryPage {
  if (!p.project.can('download_code')) throw pageError(404);
  return { gitDir: projectRepository(p.ctx.config.storages, p.project.project).gitDir, base: pathHref(p.project.fullPath) };
}

export interface RefAndPath { ref: string; commit: string; path: string }

/** The ref, its commit and the path of `segments`; null when no leading run names a commit. */
export async function refAndPath(gitDir: string, segments: string[]): Promise<RefAndPath | null> {
  const candidates: string[] = [];
  for (let n = Math.min(segments.length, MAX_REF_SEGMENTS); n >= 1; n -= 1) {
    const ref = segments.slice(0, n).join('/');
    if (readableRevision(ref)) candidates.push(ref);
  }
  if (candidates.length === 0) return null;
  const commits = await resolveCommits(gitDir, candidates);
  const at = commits.findIndex((c) => c !== null);
  if (at < 0) return null;
  const ref = candidates[at]!;
  const path = segments.slice(ref.split('/').length).join('/');
  if (Buffer.byteLength(path) > MAX_FILE_PATH_BYTES || path.split('/').some((s) => s === '.' || s === '..')) return null;
  return { ref, commit: commits[at]!, path };
}

/** `a/b` as an address with each segment escaped. */
export const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');
