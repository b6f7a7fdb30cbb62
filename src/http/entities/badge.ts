/**
 * Badge entities (the Service's lib/api/entities/basic_badge_details.rb and badge.rb, 15.2): the
 * URLs as written and as rendered for a project, then (Badge) the id and whether a project or a
 * group holds it.
 */
import { Type, type Static } from 'typebox';
import type { BadgeRow } from '../../db/tables/badges.ts';
import { renderBadgeUrl, type BadgeProjectValues } from '../../domain/badges/badges.ts';
import { exactJson } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

const basicProperties = {
  name: NString,
  link_url: Type.String(),
  image_url: Type.String(),
  rendered_link_url: Type.String(),
  rendered_image_url: Type.String(),
};
export const BasicBadgeDetailsSchema = exactJson(Type.Object(basicProperties, { title: 'BasicBadgeDetails' }));
export const BadgeSchema = exactJson(Type.Object({
  ...basicProperties,
  id: Type.Integer(),
  kind: Type.Union([Type.Literal('project'), Type.Literal('group')]),
}, { title: 'Badge' }));
export const BadgeListSchema = exactJson(Type.Array(BadgeSchema));

export function presentBasicBadge(
  b: Pick<BadgeRow, 'name' | 'link_url' | 'image_url'>, project: BadgeProjectValues | null,
): Static<typeof BasicBadgeDetailsSchema> {
  return {
    name: b.name, link_url: b.link_url, image_url: b.image_url,
    rendered_link_url: renderBadgeUrl(b.link_url, project), rendered_image_url: renderBadgeUrl(b.image_url, project),
  };
}

export function presentBadge(b: BadgeRow, project: BadgeProjectValues | null): Static<typeof BadgeSchema> {
  return { ...presentBasicBadge(b, project), id: b.id, kind: b.type === 'ProjectBadge' ? 'project' : 'group' };
}
