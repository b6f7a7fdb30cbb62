/**
 * The Branch and Tag entities of the Service's repository API. `protected` says whether a
 * protected branch or tag pattern covers the name; developers_can_push/merge whether a covering
 * pattern admits Developers (false for a branch no pattern covers, as the Service answers);
 * `can_push` whether the viewer may push to the branch. A tag's `release` is its release's tag
 * name and description (Entities::TagRelease), null without one.
 */
import { Type, type Static } from 'typebox';
import { CommitSchema, type Commit } from './commit.ts';
import { TagReleaseSchema } from './release.ts';

export const BranchSchema = Type.Object({
  name: Type.String(),
  commit: CommitSchema,
  merged: Type.Boolean(),
  protected: Type.Boolean(),
  developers_can_push: Type.Boolean(),
  developers_can_merge: Type.Boolean(),
  can_push: Type.Boolean(),
  default: Type.Boolean(),
  web_url: Type.String(),
}, { title: 'Branch' });

export const TagSchema = Type.Object({
  name: Type.String(),
  message: Type.Union([Type.String(), Type.Null()]),
  target: Type.String(),
  commit: CommitSchema,
  release: Type.Union([TagReleaseSchema, Type.Null()]),
  protected: Type.Boolean(),
}, { title: 'Tag' });

export type Branch = Static<typeof BranchSchema>;
export type Tag = Static<typeof TagSchema>;

export function presentBranch(
  name: string, commit: Commit,
  o: {
    merged: boolean; canPush: boolean; isDefault: boolean; projectWebUrl: string;
    protected: boolean; developersCanPush: boolean; developersCanMerge: boolean;
  },
): Branch {
  return {
    name, commit, merged: o.merged, protected: o.protected, developers_can_push: o.developersCanPush,
    developers_can_merge: o.developersCanMerge,
    can_push: o.canPush, default: o.isDefault, web_url: `${o.projectWebUrl}/-/tree/${name}`,
  };
}

export function presentTag(
  name: string, target: string, message: string | null, commit: Commit, isProtected: boolean, release: Tag['release'] = null,
): Tag {
  return { name, message, target, commit, release, protected: isProtected };
}
