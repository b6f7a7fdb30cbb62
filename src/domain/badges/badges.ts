/**
 * Badges (the Service's Badge, ProjectBadge and GroupBadge with Badges::CreateService,
 * UpdateService and BuildService, 15.2): a link and an image URL, each an absolute http(s) URL
 * (AddressableUrlValidator with `protocols: %w(http https)`), rendered for a project by replacing
 * the placeholders %{project_path}, %{project_id}, %{default_branch} and %{commit_sha}
 * (Badge::PLACEHOLDERS through Gitlab::StringPlaceholderReplacer: a placeholder the project has no
 * value for becomes empty; other %{…} stay as written).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BadgeRow, BadgeType } from '../../db/tables/badges.ts';
import { nowIso } from '../clock.ts';
import { insertBadge, updateBadge } from './badges.queries.ts';

export type BadgeErrors = Record<string, string[]>;

/** AddressableUrlValidator's messages for one URL (blank, unparsable, or another scheme). */
function urlErrors(value: string): string[] {
  if (value.trim() === '') return ['must be a valid URL'];
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    return ['is blocked: URI is invalid'];
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return ['is blocked: Only allowed schemes are http, https'];
  return [];
}

/** The model's validations, in its order (link_url, image_url), as render_validation_error! answers them. */
export function badgeErrors(b: { link_url: string; image_url: string }): BadgeErrors | null {
  const errors: BadgeErrors = {};
  const link = urlErrors(b.link_url);
  const image = urlErrors(b.image_url);
  if (link.length) errors.link_url = link;
  if (image.length) errors.image_url = image;
  return Object.keys(errors).length ? errors : null;
}

/** What the placeholders stand for in one project. */
export interface BadgeProjectValues {
  fullPath: string;
  id: number;
  defaultBranch: string | null;
  commitSha: string | null;
}

const PLACEHOLDER = /%\{(project_path|project_id|default_branch|commit_sha)\}/g;

/**
 * Badge#build_rendered_url for a valid badge (every stored one is, and an invalid preview is
 * refused before it is rendered): the URL as written when there is no project.
 */
export function renderBadgeUrl(url: string, project: BadgeProjectValues | null): string {
  if (!project) return url;
  return url.replace(PLACEHOLDER, (_m, key: string) => {
    switch (key) {
      case 'project_path': return project.fullPath;
      case 'project_id': return String(project.id);
      case 'default_branch': return project.defaultBranch ?? '';
      default: return project.commitSha ?? '';
    }
  });
}

export type BadgeWrite =
  | { ok: true; badge: BadgeRow }
  | { ok: false; errors: BadgeErrors };

export async function createBadge(db: Kysely<DB>, input: {
  linkUrl: string; imageUrl: string; name: string | null; holder: { projectId: number } | { groupId: number };
}): Promise<BadgeWrite> {
  const errors = badgeErrors({ link_url: input.linkUrl, image_url: input.imageUrl });
  if (errors) return { ok: false, errors };
  const now = nowIso();
  const project = 'projectId' in input.holder;
  const type: BadgeType = project ? 'ProjectBadge' : 'GroupBadge';
  const badge = await insertBadge(db, {
    link_url: input.linkUrl, image_url: input.imageUrl, name: input.name, type,
    project_id: 'projectId' in input.holder ? input.holder.projectId : null,
    group_id: 'groupId' in input.holder ? input.holder.groupId : null,
    created_at: now, updated_at: now,
  });
  return { ok: true, badge };
}

export async function changeBadge(db: Kysely<DB>, badge: BadgeRow, input: {
  linkUrl?: string; imageUrl?: string; name?: string;
}): Promise<BadgeWrite> {
  const next = { link_url: input.linkUrl ?? badge.link_url, image_url: input.imageUrl ?? badge.image_url };
  const errors = badgeErrors(next);
  if (errors) return { ok: false, errors };
  const values: { link_url?: string; image_url?: string; name?: string | null; updated_at: string } = { updated_at: nowIso() };
  if (input.linkUrl !== undefined) values.link_url = input.linkUrl;
  if (input.imageUrl !== undefined) values.image_url = input.imageUrl;
  if (input.name !== undefined) values.name = input.name;
  const updated = await updateBadge(db, badge.id, values);
  return updated ? { ok: true, badge: updated } : { ok: true, badge: { ...badge, ...values } };
}
