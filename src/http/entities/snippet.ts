/**
 * The personal snippet entity (lib/api/entities/snippet.rb, PersonalSnippet), and
 * PersonalSnippetWithAdmin adding the repository's storage shard for administrators (the
 * Service exposes `repository_storage` to those who may change it).
 */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { presentUserBasic, UserBasicSchema } from './user.ts';

export const SnippetSchema = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  visibility: Type.String(),
  author: UserBasicSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  project_id: Type.Null(),
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

export type Snippet = Static<typeof SnippetSchema>;
export type SnippetWithAdmin = Static<typeof SnippetWithAdminSchema>;

export function presentSnippet(s: SnippetRow, author: UserRow, externalUrl: string): Snippet {
  const webUrl = `${externalUrl}/-/snippets/${s.id}`;
  return {
    id: s.id,
    title: s.title,
    description: s.description,
    visibility: visibilityName(s.visibility_level),
    author: presentUserBasic(author, {}, { externalUrl, canReadProfile: true }),
    created_at: s.created_at,
    updated_at: s.updated_at,
    project_id: null,
    web_url: webUrl,
    raw_url: `${webUrl}/raw`,
    ssh_url_to_repo: `git@${new URL(externalUrl).hostname}:snippets/${s.id}.git`,
    http_url_to_repo: `${externalUrl}/snippets/${s.id}.git`,
    file_name: s.file_name,
    files: [{ path: s.file_name, raw_url: `${webUrl}/raw/main/${encodeURIComponent(s.file_name)}` }],
  };
}

export function presentSnippetWithAdmin(s: SnippetRow, author: UserRow, externalUrl: string): SnippetWithAdmin {
  return { ...presentSnippet(s, author, externalUrl), repository_storage: s.repository_storage };
}
