/**
 * Entities of the repository reads (the Service 15.2's API::Entities::Compare, Diff, Contributor
 * and the blob answer of GET …/repository/blobs/:sha).
 */
import { Type, type Static } from 'typebox';
import type { Comparison, FileDiff } from '../../domain/repositories/compare.ts';
import type { Contributor } from '../../domain/repositories/contributors.ts';
import { CommitSchema, presentCommit } from './commit.ts';

export const DiffSchema = Type.Object({
  old_path: Type.String(),
  new_path: Type.String(),
  a_mode: Type.String(),
  b_mode: Type.String(),
  new_file: Type.Boolean(),
  renamed_file: Type.Boolean(),
  deleted_file: Type.Boolean(),
  diff: Type.String(),
}, { title: 'Diff' });

export const CompareSchema = Type.Object({
  commit: Type.Union([CommitSchema, Type.Null()]),
  commits: Type.Array(CommitSchema),
  diffs: Type.Array(DiffSchema),
  compare_timeout: Type.Boolean(),
  compare_same_ref: Type.Union([Type.Boolean(), Type.Null()]),
  web_url: Type.String(),
}, { title: 'Compare' });

export const ContributorSchema = Type.Object({
  name: Type.String(),
  email: Type.String(),
  commits: Type.Integer(),
  additions: Type.Integer(),
  deletions: Type.Integer(),
}, { title: 'Contributor' });

export const BlobSchema = Type.Object({
  size: Type.Integer(),
  encoding: Type.Literal('base64'),
  content: Type.String(),
  sha: Type.String(),
}, { title: 'Blob' });

export function presentDiff(d: FileDiff): Static<typeof DiffSchema> {
  return {
    old_path: d.oldPath, new_path: d.newPath, a_mode: d.aMode, b_mode: d.bMode,
    new_file: d.newFile, renamed_file: d.renamedFile, deleted_file: d.deletedFile, diff: d.diff,
  };
}

/**
 * `from` is the revision asked for, named in web_url when it names no commit. The URL names the
 * merge base unless straight (the Service's Compare#to_param).
 */
export function presentCompare(c: Comparison, projectWebUrl: string, straight: boolean, from: string): Static<typeof CompareSchema> {
  const commits = c.commits.map((x) => presentCommit(x, projectWebUrl));
  const fromSha = straight ? c.start : (c.mergeBase ?? c.start);
  return {
    commit: commits.length > 0 ? commits[commits.length - 1] : null,
    commits,
    diffs: c.diffs.map(presentDiff),
    compare_timeout: c.overflow,
    compare_same_ref: c.same,
    web_url: `${projectWebUrl}/-/compare/${fromSha ?? encodeURIComponent(from)}...${c.head}`,
  };
}

export function presentContributor(c: Contributor): Static<typeof ContributorSchema> {
  return { name: c.name, email: c.email, commits: c.commits, additions: 0, deletions: 0 };
}
