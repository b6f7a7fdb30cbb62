/**
 * A branch created through the API (Branches::CreateService#execute): in a repository without
 * any commit the Service first commits an empty `README.md` on the default branch ("Add
 * README.md", by the caller: create_default_branch), so that the new branch has a commit to
 * start from; then the branch is created from `ref` as in any repository (ref-writes.ts). The
 * README stays even when the branch is then refused, as it does in the Service.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { commitActions, type Identity } from './commit-actions.ts';
import { hasBranches } from './git-read.ts';
import { createBranch, type RefWriteResult } from './ref-writes.ts';
import { headBranch, INITIAL_BRANCH } from './repositories.ts';
import type { ProjectRepository, RefUpdate } from './project-repository.ts';

export type CreateBranchResult =
  | { ok: true; updates: RefUpdate[] }
  | Exclude<RefWriteResult, { ok: true }> & { updates: RefUpdate[] };

/**
 * `defaultBranch` is the project's (null until its first commit): the README goes there, else
 * to the branch the repository's HEAD names (set when the project was made), else `main`.
 */
export async function createBranchFromApi(db: Kysely<DB>, repo: ProjectRepository, o: {
  name: string; ref: string; defaultBranch: string | null; user: Identity;
}): Promise<CreateBranchResult> {
  const updates: RefUpdate[] = [];
  if (!(await hasBranches(repo.gitDir))) {
    const branch = o.defaultBranch ?? (await headBranch(repo.gitDir)) ?? INITIAL_BRANCH;
    const readme = await commitActions(db, repo, {
      branch, force: false, message: 'Add README.md', author: o.user, committer: o.user,
      actions: [{ action: 'create', filePath: 'README.md', content: Buffer.alloc(0) }],
    });
    if (readme.ok) updates.push(readme.update);
    else if (readme.reason === 'read_only') return { ok: false, reason: 'read_only', updates };
    // Refused otherwise only when another write gave the repository its first commit meanwhile.
    else if (!(await hasBranches(repo.gitDir))) return { ok: false, reason: 'invalid', message: readme.message, updates };
  }
  const result = await createBranch(db, repo, o.name, o.ref);
  if (!result.ok) return { ...result, updates };
  return { ok: true, updates: [...updates, result.update] };
}
