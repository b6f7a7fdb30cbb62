/**
 * The personal snippet entity (lib/api/entities/snippet.rb, PersonalSnippet), and
 * PersonalSnippetWithAdmin adding the repository's storage shard for administrators (the
 * Service exposes `repository_storage` to those who may change it).
 */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { snippetFilePaths } from '../../domain/snippets/snippet-actions.ts';
import { presentUserBasic, UserBasicSchema } from './user.ts';
import { INITIAL_BRANCH } from '../../domain/repositories/repositories.ts';

export const SnippetSchema = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  visibility: Type.String(),
  author: UserBasicSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  // Set for the caller's project snippets in their list (GET /snippets).
  project_id: Type.Union([Type.Integer(), Type.Null()]),
  web_url: Type.String(),
  raw_url: Type.String(),
  ssh_url_to_repo: Type.String(),
  http_url_to_repo: Type.String(),
  file_name: Type.String(),
  files: Type.Array(Type.Object({ path: Type.String(), raw_url: Type.String() })),
}, { title: 'PersonalSnippet' });

export const SnippetWithAdminSchema = Type.Object({
  ...SnippetSchema.properties,
  repository_storage: Type.String(),
}, { title: 'PersonalSnippetWithAdmin' });

/** A project's snippet (Entities::ProjectSnippet): the same fields, with its project and the project's URLs. */
export const ProjectSnippetSchema = Type.Object({
  ...SnippetSchema.properties,
  project_id: Type.Integer(),
}, { title: 'ProjectSnippet' });

export type Snippet = Static<typeof SnippetSchema>;
export type ProjectSnippet = Static<typeof ProjectSnippetSchema>;
export type SnippetWithAdmin = Static<typeof SnippetWithAdminSchema>;

/**
 * A path as Rails writes a glob segment into a URL: each part escaped, `/` kept, and the
 * characters a path segment may hold (RFC 3986 pchar: sub-delims, `:` and `@`) left as they are.
 */
export function escapePath(path: string): string {
  const segment = (part: string) => encodeURIComponent(part).replace(/%(24|26|2B|2C|3B|3D|3A|40)/g, (m) => decodeURIComponent(m));
  return path.split('/').map(segment).join('/');
}

/** Where a snippet lives on the web and in git: `/-/snippets/:id` of the instance, or of its project. */
interface SnippetHome { webBase: string; repoPath: string }

function presentAt(s: SnippetRow, author: UserRow, externalUrl: string, home: SnippetHome) {
  const webUrl = `${home.webBase}/-/snippets/${s.id}`;
  return {
    id: s.id,
    title: s.title,
    description: s.description,
    visibility: visibilityName(s.visibility_level),
    author: presentUserBasic(author, {}, { externalUrl, canReadProfile: true }),
    created_at: s.created_at,
    updated_at: s.updated_at,
    web_url: webUrl,
    raw_url: `${webUrl}/raw`,
    ssh_url_to_repo: `git@${new URL(externalUrl).hostname}:${home.repoPath}.git`,
    http_url_to_repo: `${externalUrl}/${home.repoPath}.git`,
    // file_name_on_repo: the repository's first file (the row keeps it with every commit).
    file_name: s.file_name,
    files: snippetFilePaths(s).map((path) => ({ path, raw_url: `${webUrl}/raw/${INITIAL_BRANCH}/${escapePath(path)}` })),
  };
}

/** `projectFullPath`: the project's `path_with_namespace`, for a project's snippet in a personal list. */
export function presentSnippet(s: SnippetRow, author: UserRow, externalUrl: string, projectFullPath?: string): Snippet {
  const home = projectFullPath !== undefined && s.project_id !== null
    ? { webBase: `${externalUrl}/${projectFullPath}`, repoPath: `${projectFullPath}/snippets/${s.id}` }
    : { webBase: externalUrl, repoPath: `snippets/${s.id}` };
  const { web_url: webUrl, ...rest } = presentAt(s, author, externalUrl, home);
  return { ...rest, project_id: home.webBase === externalUrl ? null : s.project_id, web_url: webUrl };
}

/** `projectFullPath`: the project's `path_with_namespace`. */
export function presentProjectSnippet(
  s: SnippetRow & { project_id: number }, author: UserRow, externalUrl: string, projectFullPath: string,
): ProjectSnippet {
  const { web_url: webUrl, ...rest } = presentAt(s, author, externalUrl, {
    webBase: `${externalUrl}/${projectFullPath}`, repoPath: `${projectFullPath}/snippets/${s.id}`,
  });
  return { ...rest, project_id: s.project_id, web_url: webUrl };
}

export function presentSnippetWithAdmin(
  s: SnippetRow, author: UserRow, externalUrl: string, projectFullPath?: string,
): SnippetWithAdmin {
  return { ...presentSnippet(s, author, externalUrl, projectFullPath), repository_storage: s.repository_storage };
}
