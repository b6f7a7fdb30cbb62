/**
 * The parts webhook payloads share, in the Service's shapes: Project#hook_attrs, User#hook_attrs,
 * Commit#hook_attrs (lib/gitlab/data_builder/*.rb build on them), and its time format: payload
 * times travel as Ruby's Time#to_s ("2016-08-12 15:23:28 UTC") because the Service serializes
 * the hash for its job queue before sending it.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { findUserById } from '../users/users.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Where payload URLs point: KILN_EXTERNAL_URL and KILN_SSH_PORT. */
export interface HookUrls {
  externalUrl: string;
  sshPort?: number;
}

/** "2016-08-12 15:23:28 UTC" from an ISO-8601 UTC text; null stays null. */
export function hookTime(iso: string | null): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export interface ProjectHookAttrs {
  id: number;
  name: string;
  description: string | null;
  web_url: string;
  avatar_url: string | null;
  git_ssh_url: string;
  git_http_url: string;
  namespace: string;
  visibility_level: number;
  path_with_namespace: string;
  default_branch: string | null;
  ci_config_path: string | null;
  homepage?: string;
  url?: string;
  ssh_url?: string;
  http_url?: string;
}

function sshUrl(urls: HookUrls, fullPath: string): string {
  const host = new URL(urls.externalUrl).hostname;
  if (urls.sshPort === undefined || urls.sshPort === 22 || urls.sshPort === 0) return `git@${host}:${fullPath}.git`;
  return `ssh://git@${host.includes(':') ? `[${host}]` : host}:${urls.sshPort}/${fullPath}.git`;
}

/** Project#hook_attrs; `backward` adds homepage, url, ssh_url and http_url (push payloads keep them). */
export async function projectHookAttrs(db: Db, urls: HookUrls, project: ProjectRow, backward = true): Promise<ProjectHookAttrs> {
  const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
  const fullPath = ns ? `${ns.fullPath}/${project.path}` : project.path;
  const webUrl = `${urls.externalUrl}/${fullPath}`;
  const attrs: ProjectHookAttrs = {
    id: project.id, name: project.name, description: project.description, web_url: webUrl, avatar_url: null,
    git_ssh_url: sshUrl(urls, fullPath), git_http_url: `${webUrl}.git`, namespace: ns?.namespace.name ?? '',
    visibility_level: project.visibility_level, path_with_namespace: fullPath, default_branch: project.default_branch,
    ci_config_path: project.ci_config_path,
  };
  if (backward) Object.assign(attrs, { homepage: webUrl, url: sshUrl(urls, fullPath), ssh_url: sshUrl(urls, fullPath), http_url: `${webUrl}.git` });
  return attrs;
}

export interface UserHookAttrs {
  id: number;
  name: string;
  username: string;
  avatar_url: string | null;
  email: string | null;
}

/** User#hook_attrs: the public email only (the Service shows no private address to a receiver). */
export async function userHookAttrs(db: Db, urls: HookUrls, userId: number | null): Promise<UserHookAttrs | null> {
  if (userId === null) return null;
  const user = await findUserById(db, userId);
  if (!user) return null;
  return {
    id: user.id, name: user.name, username: user.username,
    avatar_url: user.avatar ? `${urls.externalUrl}/uploads/-/system/user/avatar/${user.id}/${encodeURIComponent(user.avatar)}` : null,
    email: user.public_email || null,
  };
}

export interface CommitHookAttrs {
  id: string;
  message: string;
  title: string;
  timestamp: string;
  url: string;
  author: { name: string; email: string };
  added?: string[];
  modified?: string[];
  removed?: string[];
}

/** "2013-05-13T18:18:08+00:00": Commit#hook_attrs' timestamp (Time#xmlschema). */
export function xmlschema(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
