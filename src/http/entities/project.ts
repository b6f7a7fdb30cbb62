/**
 * The project entities as the Service's clients read them (issue 3; python-gitlab and gitbeaker):
 * ProjectIdentity → BasicProject → Project, and ProjectWithAdmin adding the storage shard for
 * administrators. `namespace` is the NamespaceBasic of the Service.
 */
import { Type, type Static } from 'typebox';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { NamespaceRow } from '../../db/types.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { presentProjectAttributes, ProjectAttributesProperties, projectTopics } from './project-attributes.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const NamespaceBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path: Type.String(),
  kind: Type.String(),
  full_path: Type.String(),
  parent_id: Type.Union([Type.Integer(), Type.Null()]),
  avatar_url: NString,
  web_url: Type.String(),
}, { title: 'NamespaceBasic' });

export const ProjectIdentitySchema = Type.Object({
  id: Type.Integer(),
  description: NString,
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
}, { title: 'ProjectIdentity' });

export const BasicProjectSchema = Type.Object({
  ...ProjectIdentitySchema.properties,
  default_branch: NString,
  tag_list: Type.Array(Type.String()),
  topics: Type.Array(Type.String()),
  ssh_url_to_repo: Type.String(),
  http_url_to_repo: Type.String(),
  web_url: Type.String(),
  readme_url: NString,
  avatar_url: NString,
  forks_count: Type.Integer(),
  star_count: Type.Integer(),
  last_activity_at: Type.String(),
  namespace: NamespaceBasicSchema,
}, { title: 'BasicProject' });

export const ProjectSchema = Type.Object({
  ...BasicProjectSchema.properties,
  visibility: Type.String(),
  archived: Type.Boolean(),
  empty_repo: Type.Boolean(),
  creator_id: Type.Union([Type.Integer(), Type.Null()]),
  updated_at: Type.String(),
  /** The Service exposes public_builds under this name. */
  public_jobs: Type.Boolean(),
  // The attributes a project holds (issue 35, item 8): project-attributes.ts.
  ...ProjectAttributesProperties,
}, { title: 'Project' });

export const ProjectWithAdminSchema = Type.Object({
  ...ProjectSchema.properties,
  repository_storage: Type.String(),
}, { title: 'ProjectWithAdmin' });

export type ProjectIdentity = Static<typeof ProjectIdentitySchema>;
export type Project = Static<typeof ProjectSchema>;
export type ProjectWithAdmin = Static<typeof ProjectWithAdminSchema>;
export type NamespaceBasic = Static<typeof NamespaceBasicSchema>;

/** A project's namespace with its full path and name, resolved by the route. */
export interface NamespaceInfo {
  namespace: NamespaceRow;
  fullPath: string;
  fullName: string;
}

export function presentNamespaceBasic(info: NamespaceInfo, externalUrl: string): NamespaceBasic {
  const ns = info.namespace;
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: info.fullPath,
    parent_id: ns.parent_id,
    avatar_url: null,
    web_url: ns.kind === 'group' ? `${externalUrl}/groups/${info.fullPath}` : `${externalUrl}/${info.fullPath}`,
  };
}

export function presentProjectIdentity(p: ProjectRow, ns: NamespaceInfo): ProjectIdentity {
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${ns.fullName} / ${p.name}`,
    path: p.path,
    path_with_namespace: `${ns.fullPath}/${p.path}`,
    created_at: p.created_at,
  };
}

/** The host part of `git@host:path.git` clone URLs. */
function sshHost(externalUrl: string): string {
  return new URL(externalUrl).hostname;
}

export function presentProject(p: ProjectRow, ns: NamespaceInfo, externalUrl: string): Project {
  const fullPath = `${ns.fullPath}/${p.path}`;
  const webUrl = `${externalUrl}/${fullPath}`;
  const topics = projectTopics(p);
  return {
    ...presentProjectIdentity(p, ns),
    default_branch: p.default_branch,
    tag_list: topics,
    topics,
    ssh_url_to_repo: `git@${sshHost(externalUrl)}:${fullPath}.git`,
    http_url_to_repo: `${webUrl}.git`,
    web_url: webUrl,
    readme_url: p.readme_path && p.default_branch ? `${webUrl}/-/blob/${p.default_branch}/${p.readme_path}` : null,
    avatar_url: null,
    forks_count: 0,
    star_count: 0,
    last_activity_at: p.last_activity_at,
    namespace: presentNamespaceBasic(ns, externalUrl),
    visibility: visibilityName(p.visibility_level),
    archived: p.archived === 1,
    empty_repo: p.empty_repo === 1,
    creator_id: p.creator_id,
    updated_at: p.updated_at,
    public_jobs: p.public_builds !== 0,
    ...presentProjectAttributes(p),
  };
}

export function presentProjectWithAdmin(p: ProjectRow, ns: NamespaceInfo, externalUrl: string): ProjectWithAdmin {
  return { ...presentProject(p, ns, externalUrl), repository_storage: p.repository_storage };
}
