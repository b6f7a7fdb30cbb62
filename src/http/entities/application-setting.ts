/**
 * The ApplicationSetting entity (GET/PUT /application/settings): every setting of the catalogue
 * (domain/settings/catalogue.ts) but the secret keys, then the names the Service still answers
 * besides the current ones (its entity's "support legacy names" block): `signin_enabled` and
 * `password_authentication_enabled` for password_authentication_enabled_for_web,
 * `throttle_unauthenticated_web_*` for the web throttle's columns, `user_email_lookup_limit` for
 * search_rate_limit (spec, Deprecations: removal planned for 15.0, still served in 15.2).
 *
 * `repository_storages_weighted` lists every configured shard: a shard the stored weights do not
 * name has weight 0 (the default shard 100 while no weights were ever set), as the shard picker
 * reads them (repositories/storage.ts).
 */
import { Type, type TSchema } from 'typebox';
import type { StorageShard } from '../../config/schema.ts';
import { CATALOGUE, SETTING_NAMES, type SettingName, type Settings } from '../../domain/settings/catalogue.ts';
import type { SettingDecl } from '../../domain/settings/declarations.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

/** Stored but answered under another name (or not at all), as the Service's entity does. */
const NOT_SHOWN = new Set<SettingName>(['performance_bar_allowed_group_path']);

function schemaOf(decl: SettingDecl): TSchema {
  switch (decl.type) {
    case 'boolean': return Type.Boolean();
    case 'integer': return decl.nullable ? Type.Union([Type.Integer(), Type.Null()]) : Type.Integer();
    case 'float': return Type.Number();
    case 'string': return decl.default === null || decl.values?.includes('nil') ? NString : Type.String();
    case 'datetime': return NString;
    case 'strings': case 'visibilities': return Type.Array(Type.String());
    case 'visibility': return Type.String();
    case 'weights': return Type.Record(Type.String(), Type.Integer());
  }
}

/** The settings shown, in the catalogue's (alphabetical) order. */
export const SHOWN_SETTINGS = SETTING_NAMES.filter((name) => !(CATALOGUE[name] as SettingDecl).secret && !NOT_SHOWN.has(name));

const properties: Record<string, TSchema> = {
  id: Type.Integer(),
  performance_bar_allowed_group_id: Type.Union([Type.Integer(), Type.Null()]),
};
for (const name of SHOWN_SETTINGS) properties[name] = schemaOf(CATALOGUE[name] as SettingDecl);
Object.assign(properties, {
  repository_storages: Type.Array(Type.String()),
  password_authentication_enabled: Type.Boolean(),
  signin_enabled: Type.Boolean(),
  allow_local_requests_from_hooks_and_services: Type.Boolean(),
  asset_proxy_whitelist: Type.Array(Type.String()),
  throttle_unauthenticated_web_enabled: Type.Boolean(),
  throttle_unauthenticated_web_requests_per_period: Type.Integer(),
  throttle_unauthenticated_web_period_in_seconds: Type.Integer(),
  user_email_lookup_limit: Type.Integer(),
});

export const ApplicationSettingSchema = Type.Object(properties, { title: 'ApplicationSetting' });

export interface SettingsContext {
  shards: StorageShard[];
  /** The group named by performance_bar_allowed_group_path, when there is one. */
  performanceBarGroupId: number | null;
  /** The host of the external URL: `users.noreply.<host>` is the default commit email hostname. */
  host: string;
}

export function presentApplicationSetting(settings: Settings, ctx: SettingsContext): Record<string, unknown> {
  const out: Record<string, unknown> = { id: 1, performance_bar_allowed_group_id: ctx.performanceBarGroupId };
  for (const name of SHOWN_SETTINGS) out[name] = settings[name];
  const weights: Record<string, number> = {};
  for (const shard of ctx.shards) weights[shard.name] = settings.repository_storages_weighted[shard.name] ?? 0;
  out.repository_storages_weighted = weights;
  out.commit_email_hostname = settings.commit_email_hostname ?? `users.noreply.${ctx.host}`;
  // Always true in the Service since 14.x: git bitmaps cannot be turned off.
  out.housekeeping_bitmaps_enabled = true;
  return Object.assign(out, {
    repository_storages: Object.keys(weights).filter((name) => weights[name] > 0),
    password_authentication_enabled: settings.password_authentication_enabled_for_web,
    signin_enabled: settings.password_authentication_enabled_for_web,
    allow_local_requests_from_hooks_and_services: settings.allow_local_requests_from_web_hooks_and_services,
    asset_proxy_whitelist: settings.asset_proxy_allowlist,
    throttle_unauthenticated_web_enabled: settings.throttle_unauthenticated_enabled,
    throttle_unauthenticated_web_requests_per_period: settings.throttle_unauthenticated_requests_per_period,
    throttle_unauthenticated_web_period_in_seconds: settings.throttle_unauthenticated_period_in_seconds,
    user_email_lookup_limit: settings.search_rate_limit,
  });
}
