/**
 * Templates a project keeps in its own repository (the Service's RepoTemplateFinder, used by
 * IssueTemplate and MergeRequestTemplate): Markdown files directly under
 * `.gitlab/issue_templates/` and `.gitlab/merge_request_templates/` of the default branch's head.
 * A template's key and name are its file name without `.md`; an empty repository has none.
 */
import { listTree, readBlob, resolveCommit } from '../repositories/git-read.ts';

export type RepoTemplateType = 'issues' | 'merge_requests';

const DIRECTORY: Record<RepoTemplateType, string> = {
  issues: '.gitlab/issue_templates',
  merge_requests: '.gitlab/merge_request_templates',
};
const EXTENSION = '.md';
/** Bytes of one template read (a description is at most 1 MB in the Service). */
const MAX_TEMPLATE_BYTES = 1024 * 1024;

interface Entry { key: string; blobId: string }

async function entries(gitDir: string, defaultBranch: string | null, type: RepoTemplateType): Promise<Entry[]> {
  if (defaultBranch === null) return [];
  const head = await resolveCommit(gitDir, `refs/heads/${defaultBranch}`);
  if (head === null) return [];
  const dir = DIRECTORY[type];
  return (await listTree(gitDir, head, dir, false))
    .filter((e) => e.type === 'blob' && e.name.endsWith(EXTENSION) && e.name.length > EXTENSION.length)
    .map((e) => ({ key: e.name.slice(0, -EXTENSION.length), blobId: e.id }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
}

/** The project's templates of a type, sorted by name. */
export async function listRepoTemplates(
  gitDir: string, defaultBranch: string | null, type: RepoTemplateType,
): Promise<{ key: string; name: string }[]> {
  return (await entries(gitDir, defaultBranch, type)).map((e) => ({ key: e.key, name: e.key }));
}

/** One template's name and text, or null when the default branch has no such file. */
export async function readRepoTemplate(
  gitDir: string, defaultBranch: string | null, type: RepoTemplateType, key: string,
): Promise<{ name: string; content: string } | null> {
  const found = (await entries(gitDir, defaultBranch, type)).find((e) => e.key === key);
  if (!found) return null;
  return { name: found.key, content: (await readBlob(gitDir, found.blobId, MAX_TEMPLATE_BYTES)).toString('utf8') };
}
