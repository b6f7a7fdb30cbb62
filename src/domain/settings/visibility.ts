/**
 * The instance's visibility settings (Gitlab::VisibilityLevel.allowed_for? and the
 * default_*_visibility defaults): a user who is not an administrator cannot give a project, group
 * or snippet a level listed in restricted_visibility_levels, and what is created without a
 * visibility takes the default of its kind.
 */
import { VISIBILITY_LEVELS, visibilityName } from '../permissions/access.ts';
import type { Settings } from './catalogue.ts';

export type VisibilityKind = 'project' | 'group' | 'snippet';

/** The level a new `kind` takes when the request names none. */
export function defaultVisibilityLevel(settings: Settings, kind: VisibilityKind): number {
  return VISIBILITY_LEVELS[settings[`default_${kind}_visibility`]];
}

/**
 * The model error of a level the administrator restricted (the Service's deny_visibility_level,
 * `Public has been restricted by your GitLab administrator`), or null when `user` may use it.
 */
export function restrictedVisibilityError(settings: Settings, user: { admin: number }, level: number): string | null {
  if (user.admin === 1) return null;
  const name = visibilityName(level);
  if (!settings.restricted_visibility_levels.includes(name)) return null;
  return `${name[0].toUpperCase()}${name.slice(1)} has been restricted by your Service administrator`;
}
