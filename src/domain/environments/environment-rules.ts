/**
 * What an environment's attributes must be, with the Service's texts (app/models/environment.rb,
 * Gitlab::Regex environment_name_regex / environment_slug_regex, lib/gitlab/slug/environment.rb,
 * Environment#guess_tier), and the scope matching of environment-scoped CI/CD variables
 * (HasEnvironmentScope#on_environment).
 */
import { createHash } from 'node:crypto';
import { ValidationErrors } from '../validation-errors.ts';

export const ENVIRONMENT_STATES = ['available', 'stopping', 'stopped'] as const;
export const TIERS = ['production', 'staging', 'testing', 'development', 'other'] as const;
export const MAX_NAME = 255;
export const MAX_URL = 255;

/** Letters, digits, `_ / $ { } .`, spaces and `-`, never starting or ending with `/`. */
const NAME_FORMAT = /^[a-zA-Z0-9_${}. -]([a-zA-Z0-9_/${}. -]*[a-zA-Z0-9_${}. -])?$/;
const NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";

export function isValidEnvironmentName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_NAME && NAME_FORMAT.test(name);
}

/**
 * The slug: lowercase letters, digits and `-`, starting with a letter, at most 24 characters
 * (OpenShift), not ending in `-`. A name that had to change gets a predictable 6-character
 * suffix from its SHA-256 (base 36), so two names rarely share a slug (Gitlab::Slug::Environment).
 */
export function environmentSlug(name: string): string {
  let slug = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(slug)) slug = `env-${slug}`;
  slug = slug.replace(/-+/g, '-');
  if (slug.length > 24 || slug !== name) {
    slug = slug.slice(0, 17);
    if (!slug.endsWith('-')) slug += '-';
    return slug + BigInt(`0x${createHash('sha256').update(name).digest('hex')}`).toString(36).slice(-6);
  }
  return slug.replace(/-$/, '');
}

/** Environment#guess_tier: the tier a name suggests when none is given. */
export function guessTier(name: string): string {
  if (/(dev|review|trunk)/i.test(name)) return 'development';
  if (/(test|tst|int|ac(ce|)pt|qa|qc|control|quality)/i.test(name)) return 'testing';
  if (/(st(a|)g|mod(e|)l|pre|demo|non)/i.test(name)) return 'staging';
  if (/(pr(o|)d|live)/i.test(name)) return 'production';
  return 'other';
}

/** Environment#set_environment_type: the folder of `review/app` is `review`; a name without `/` has none. */
export function environmentType(name: string): string | null {
  const parts = name.split('/');
  return parts.length > 1 ? parts[0] : null;
}

export function nameErrors(errors: ValidationErrors, name: string): void {
  if (name.trim() === '') errors.add('name', "can't be blank");
  if (name.length > MAX_NAME) errors.add('name', `is too long (maximum is ${MAX_NAME} characters)`);
  if (!NAME_FORMAT.test(name)) errors.add('name', NAME_MESSAGE);
}

/** AddressableUrlValidator as Environment uses it: http(s) URLs only, at most 255 characters. */
export function externalUrlErrors(errors: ValidationErrors, url: string | null): void {
  if (url === null) return;
  if (url.length > MAX_URL) errors.add('external_url', `is too long (maximum is ${MAX_URL} characters)`);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    errors.add('external_url', 'is blocked: URI is invalid');
    return;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    errors.add('external_url', 'is blocked: Only allowed schemes are http, https');
  }
}

/** Environment#nullify_external_url: a blank URL is none. */
export function normaliseUrl(url: string | null | undefined): string | null {
  return url === undefined || url === null || url.trim() === '' ? null : url;
}

/**
 * Whether a variable's `environment_scope` covers `environment`: `*` covers every environment,
 * a scope without `*` only its own name, and `*` inside a scope stands for any text (the
 * Service's LIKE with `*` as `%`, Gitlab::SQL::Glob). A job without an environment receives only
 * `*`-scoped variables.
 */
export function scopeMatches(scope: string, environment: string | null): boolean {
  if (scope === '*') return true;
  if (environment === null) return false;
  if (!scope.includes('*')) return scope === environment;
  const pattern = scope.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 's').test(environment);
}

/**
 * Where a matching scope stands when two variables of one owner share a key: `*` lowest, then
 * wildcard scopes, then the environment's own name (the most specific one wins, as the Service
 * orders on_environment's matches).
 */
export function scopePrecedence(scope: string): number {
  if (scope === '*') return 0;
  return scope.includes('*') ? 1 : 2;
}
