/**
 * The parameters of PUT /application/settings, declared from the settings catalogue with the
 * Grape type of each (lib/api/settings.rb: `type: Boolean`, `Integer`, `values:`, arrays that take
 * a comma-separated string), and the checks the Service's ApplicationSetting model makes after
 * Grape (numericality bounds, URLs, visibility levels), answered in its words: Grape's refusals
 * as 400 `{"error": "x is invalid"}`, the model's as 400 `{"message": {"x": ["…"]}}`.
 */
import type { TSchema } from 'typebox';
import { CATALOGUE, SETTING_NAMES, type SettingName, type Settings } from '../../../domain/settings/catalogue.ts';
import type { SettingDecl, VisibilityName } from '../../../domain/settings/declarations.ts';
import { isValidRefName } from '../../../domain/repositories/ref-name.ts';
import { VISIBILITIES, VISIBILITY_LEVELS, visibilityName } from '../../../domain/permissions/access.ts';
import { invalidParams, missingAttribute, validationFailed } from '../../errors.ts';
import { defineParams, INT32_MAX, INT32_MIN, P } from '../../input/params.ts';

function paramOf(decl: SettingDecl): TSchema {
  switch (decl.type) {
    case 'boolean': return P.boolean();
    case 'integer': return P.integer({ minimum: INT32_MIN, maximum: INT32_MAX });
    case 'float': return P.number();
    case 'string': return decl.values ? P.oneOf(decl.values) : P.string({ maxLength: decl.maxLength });
    case 'datetime': return P.dateTime();
    case 'strings': return P.array(decl.values ? P.oneOf(decl.values) : P.name(), { commaSeparated: true });
    case 'visibility': return P.oneOf(VISIBILITIES);
    case 'visibilities': return P.array(P.name(), { commaSeparated: true });
    case 'weights': return P.hash({ description: 'shard name → weight 0–100 for new repositories' });
  }
}

/** Names the Service still takes for a setting of another name (its "support legacy names" block). */
export const LEGACY_NAMES = {
  signin_enabled: 'password_authentication_enabled_for_web',
  password_authentication_enabled: 'password_authentication_enabled_for_web',
  admin_notification_email: 'abuse_notification_email',
  asset_proxy_whitelist: 'asset_proxy_allowlist',
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
  user_email_lookup_limit: 'search_rate_limit',
  throttle_unauthenticated_web_enabled: 'throttle_unauthenticated_enabled',
  throttle_unauthenticated_web_requests_per_period: 'throttle_unauthenticated_requests_per_period',
  throttle_unauthenticated_web_period_in_seconds: 'throttle_unauthenticated_period_in_seconds',
  performance_bar_allowed_group_id: 'performance_bar_allowed_group_path',
} as const satisfies Record<string, SettingName>;

const properties: Record<string, TSchema> = {};
for (const name of SETTING_NAMES) properties[name] = P.optional(paramOf(CATALOGUE[name] as SettingDecl));
for (const [legacy, name] of Object.entries(LEGACY_NAMES)) properties[legacy] = P.optional(paramOf(CATALOGUE[name] as SettingDecl));
Object.assign(properties, {
  // (GitLab 13.0 and earlier) The shards new projects may go to: each listed one weighs 100, the others 0.
  repository_storages: P.optional(P.array(P.name(), { commaSeparated: true })),
  // Deprecated: `false` forgets the performance bar's group.
  performance_bar_enabled: P.optional(P.boolean()),
});

export const PARAMETER_NAMES = Object.keys(properties);

export const updateParams = defineParams(properties as Record<string, ReturnType<typeof P.optional>>, {
  atLeastOneOf: [PARAMETER_NAMES],
  mutuallyExclusive: [['password_authentication_enabled_for_web', 'password_authentication_enabled', 'signin_enabled']],
});

export interface SettingsChange {
  values: Partial<Settings>;
  /** Weights named by the request, merged with the stored ones by the caller. */
  weights?: Record<string, string>;
  /** Shards to weigh 100 (the others 0), from the deprecated `repository_storages`. */
  storages?: string[];
}

/** ActiveModel's numericality messages. */
function numberErrors(decl: SettingDecl & { type: 'integer' | 'float' }, n: number): string[] {
  const out: string[] = [];
  const notGreater = decl.type === 'integer' && decl.greaterThan !== undefined && !(n > decl.greaterThan);
  if (notGreater) out.push(`must be greater than ${decl.greaterThan}`);
  if (decl.min !== undefined && n < decl.min) out.push(`must be greater than or equal to ${decl.min}`);
  if (decl.max !== undefined && n > decl.max) out.push(`must be less than or equal to ${decl.max}`);
  return out;
}

function stringErrors(decl: SettingDecl & { type: 'string' }, s: string): string[] {
  if (s === '') return [];
  switch (decl.check) {
    case 'url': {
      // AddressableUrlValidator: an absolute http(s) URL.
      try {
        const u = new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:' ? [] : ['is blocked: Only allowed schemes are http, https'];
      } catch {
        return ['must be a valid URL'];
      }
    }
    case 'email': return /^[^@\s]+@[^@\s]+$/.test(s) ? [] : ['is invalid'];
    case 'ref': return isValidRefName(s) && !s.startsWith('refs/') ? [] : ['is invalid'];
    case 'token_prefix': return /^[a-zA-Z0-9_+=/@:.-]+$/.test(s)
      ? [] : ["can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'"];
    default: return [];
  }
}

/** A visibility as the model's `restricted_visibility_levels=` reads it: a name or a level. */
function visibilityOf(value: string): VisibilityName | null {
  if ((VISIBILITIES as readonly string[]).includes(value)) return value as VisibilityName;
  return /^\d+$/.test(value) && Object.values(VISIBILITY_LEVELS).includes(Number(value) as 0) ? visibilityName(Number(value)) : null;
}

/**
 * The settings a validated request changes, or the Service's 400. `input` holds the declared
 * parameters given (an empty value of a non-string type is null, Grape's nil).
 */
export function settingsChange(input: Record<string, unknown>): SettingsChange {
  const given = { ...input };
  // A legacy name sets its setting when the current name is not given too.
  for (const [legacy, name] of Object.entries(LEGACY_NAMES)) {
    if (given[legacy] !== undefined && given[name] === undefined) given[name] = given[legacy];
    delete given[legacy];
  }
  const clearsGroupPath = given.performance_bar_enabled === false && given.performance_bar_allowed_group_path === undefined;
  if (clearsGroupPath) given.performance_bar_allowed_group_path = null;
  delete given.performance_bar_enabled;

  const grape: string[] = [];
  const model: Record<string, string[]> = {};
  const values: Record<string, unknown> = {};
  const change: SettingsChange = { values: values as Partial<Settings> };
  const storages = given.repository_storages;
  delete given.repository_storages;
  if (Array.isArray(storages)) change.storages = storages as string[];

  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const decl = CATALOGUE[name as SettingName] as SettingDecl;
    const fail = (messages: string[]) => {
      if (messages.length > 0) model[name] = messages;
    };
    switch (decl.type) {
      case 'boolean':
        if (value === null) grape.push(`${name} is invalid`);
        else values[name] = value;
        break;
      case 'integer':
      case 'float': {
        if (value === null) {
          if (decl.type === 'integer' && decl.nullable) values[name] = null;
          else grape.push(`${name} is invalid`);
          break;
        }
        const n = value as number;
        if (decl.type === 'integer' && decl.values && !decl.values.includes(n)) {
          grape.push(`${name} does not have a valid value`);
          break;
        }
        fail(numberErrors(decl, n));
        values[name] = n;
        break;
      }
      case 'string': {
        const s = value as string | null;
        if (decl.values?.includes('nil')) values[name] = s === 'nil' || s === '' || s === null ? null : s;
        else if (s === null) values[name] = null;
        else {
          fail(stringErrors(decl, s));
          values[name] = s;
        }
        break;
      }
      case 'datetime':
        values[name] = value;
        break;
      case 'strings':
        values[name] = value === null ? [] : [...new Set(value as string[])];
        break;
      case 'visibility':
        if (value === null) grape.push(`${name} is invalid`);
        else values[name] = value;
        break;
      case 'visibilities': {
        const levels: VisibilityName[] = [];
        for (const item of (value ?? []) as string[]) {
          const v = visibilityOf(item);
          if (v === null) (model[name] ??= []).push(`'${item}' is not a valid visibility level`);
          else if (!levels.includes(v)) levels.push(v);
        }
        values[name] = levels;
        break;
      }
      case 'weights':
        if (value === null) grape.push(`${name} is invalid`);
        else change.weights = value as Record<string, string>;
        break;
    }
  }
  if (grape.length > 0) throw invalidParams(grape);
  // Grape's `given x: ->(val) { val } do requires … end`: turning x on needs its companions.
  for (const name of Object.keys(given)) {
    const decl = CATALOGUE[name as SettingName] as SettingDecl | undefined;
    if (decl?.requires && given[name] === true) {
      const missing = decl.requires.find((other) => given[other] === undefined);
      if (missing) throw missingAttribute(missing);
    }
  }
  if (Object.keys(model).length > 0) throw validationFailed(model);
  return change;
}
