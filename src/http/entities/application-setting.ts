/**
 * The ApplicationSetting entity (GET/PUT /application/settings) with the settings kiln has.
 * `repository_storages_weighted` lists every configured shard: a shard the stored weights do not
 * name has weight 0 (the default shard 100 while no weights were ever set), as the shard picker
 * reads them (repositories/storage.ts).
 */
import { Type, type Static } from 'typebox';
import type { StorageShard } from '../../config/schema.ts';
import type { SETTING_DEFAULTS } from '../../domain/settings/settings.queries.ts';

export const ApplicationSettingSchema = Type.Object({
  id: Type.Integer(),
  require_admin_approval_after_user_signup: Type.Boolean(),
  repository_storages_weighted: Type.Record(Type.String(), Type.Integer()),
  search_rate_limit: Type.Integer(),
  search_rate_limit_unauthenticated: Type.Integer(),
  /** Deprecated alias of search_rate_limit (spec, Deprecations: removal planned for 15.0, still served in 15.2). */
  user_email_lookup_limit: Type.Integer(),
}, { title: 'ApplicationSetting' });

export type ApplicationSetting = Static<typeof ApplicationSettingSchema>;

export function presentApplicationSetting(settings: typeof SETTING_DEFAULTS, shards: StorageShard[]): ApplicationSetting {
  const weights: Record<string, number> = {};
  for (const shard of shards) weights[shard.name] = settings.repository_storages_weighted[shard.name] ?? 0;
  return {
    id: 1,
    require_admin_approval_after_user_signup: settings.require_admin_approval_after_user_signup,
    repository_storages_weighted: weights,
    search_rate_limit: settings.search_rate_limit,
    search_rate_limit_unauthenticated: settings.search_rate_limit_unauthenticated,
    user_email_lookup_limit: settings.search_rate_limit,
  };
}
