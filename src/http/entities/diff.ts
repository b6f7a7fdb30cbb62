/**
 * The Service's Diff entity (lib/api/entities/diff.rb): one file's change in a commit, its patch
 * from the first hunk, and BasicRef (lib/api/entities/basic_ref.rb), a branch or tag by name.
 */
import { Type, type Static } from 'typebox';
import type { FileDiff } from '../../domain/repositories/commit-diff.ts';

export const DiffSchema = Type.Object({
  diff: Type.String(),
  new_path: Type.String(),
  old_path: Type.String(),
  a_mode: Type.String(),
  b_mode: Type.String(),
  new_file: Type.Boolean(),
  renamed_file: Type.Boolean(),
  deleted_file: Type.Boolean(),
}, { title: 'Diff' });
export type Diff = Static<typeof DiffSchema>;

export function presentDiff(d: FileDiff): Diff {
  return {
    diff: d.diff, new_path: d.newPath, old_path: d.oldPath, a_mode: d.aMode, b_mode: d.bMode,
    new_file: d.newFile, renamed_file: d.renamedFile, deleted_file: d.deletedFile,
  };
}

export const BasicRefSchema = Type.Object({
  type: Type.Union([Type.Literal('branch'), Type.Literal('tag')]),
  name: Type.String(),
}, { title: 'BasicRef' });
