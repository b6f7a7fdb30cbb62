/**
 * GET/PUT /application/settings (administrators; the Service's lib/api/settings.rb) with the
 * settings kiln has. `repository_storages_weighted` steers new repositories between shards, as
 * the spec advises before a bulk storage move; a PUT names the shards whose weight changes and
 * keeps the others. Invalid weights answer the Service's model errors (400 `{"message":
 * {"repository_storages_weighted": [...]}}`); nothing is written unless every value is valid.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { getAllSettings, setSetting } from '../../../domain/settings/settings.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { invalidParams, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { ApplicationSettingSchema, presentApplicationSetting } from '../../entities/application-setting.ts';
import { route } from '../../route.ts';

const SETTINGS = [
  'require_admin_approval_after_user_signup', 'repository_storages_weighted',
  'search_rate_limit', 'search_rate_limit_unauthenticated', 'user_email_lookup_limit',
];

/** Requests a minute; the Service keeps these in an integer column. */
const rateLimit = (description: string) => P.optional(P.integer({ minimum: 0, maximum: 2_147_483_647, description }));

const updateParams = defineParams({
  require_admin_approval_after_user_signup: P.optional(P.boolean()),
  repository_storages_weighted: P.optional(P.hash({ description: 'shard name → weight 0–100 for new repositories' })),
  search_rate_limit: rateLimit('searches a minute per signed-in user'),
  search_rate_limit_unauthenticated: rateLimit('searches a minute per IP address for anonymous callers'),
  user_email_lookup_limit: rateLimit('deprecated: alias of search_rate_limit'),
}, { atLeastOneOf: [SETTINGS] });

type RateLimitSetting = 'search_rate_limit' | 'search_rate_limit_unauthenticated';

const applicationSettings: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['application settings'];
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  route(app, {
    method: 'GET', url: '/application/settings', auth: 'required',
    schema: { summary: 'The instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async (_context) => presentApplicationSetting(await getAllSettings(db), config.storages));

  route(app, {
    method: 'PUT', url: '/application/settings', auth: 'required', params: updateParams,
    schema: { summary: 'Change instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async ({ input }) => {
    for (const name of SETTINGS) {
      if ((input as Record<string, unknown>)[name] === null) throw invalidParams([`${name} is invalid`]);
    }
    if (input.repository_storages_weighted === null) throw invalidParams(['repository_storages_weighted is invalid']);
    const limits: Partial<Record<RateLimitSetting, number>> = {};
    for (const name of ['search_rate_limit', 'search_rate_limit_unauthenticated'] as const) {
      const value = input[name];
      if (typeof value !== 'number') continue;
      if (value < 0 || value > 2_147_483_647) throw invalidParams([`${name} is invalid`]);
      limits[name] = value;
    }
    // The deprecated name sets search_rate_limit, as the Service's settings API maps it.
    if (typeof input.user_email_lookup_limit === 'number' && limits.search_rate_limit === undefined) {
      if (input.user_email_lookup_limit < 0 || input.user_email_lookup_limit > 2_147_483_647) throw invalidParams(['user_email_lookup_limit is invalid']);
      limits.search_rate_limit = input.user_email_lookup_limit;
    }
    const current = await getAllSettings(db);
    let weights: Record<string, number> | undefined;
    if (input.repository_storages_weighted !== undefined) {
      const messages: string[] = [];
      const names = new Set(config.storages.map((s) => s.name));
      const unknown = Object.keys(input.repository_storages_weighted).filter((name) => !names.has(name));
      if (unknown.length > 0) messages.push(`can't include: ${unknown.join(', ')}`);
      weights = { ...current.repository_storages_weighted };
      for (const [name, raw] of Object.entries(input.repository_storages_weighted)) {
        if (!/^\s*\d+\s*$/.test(raw)) messages.push(`value for '${name}' must be an integer`);
        else if (Number(raw) > 100) messages.push(`value for '${name}' must be between 0 and 100`);
        else weights[name] = Number(raw);
      }
      if (messages.length > 0) throw validationFailed({ repository_storages_weighted: messages });
    }
    await db.transaction().execute(async (trx) => {
      if (input.require_admin_approval_after_user_signup !== undefined) {
        await setSetting(trx, 'require_admin_approval_after_user_signup', input.require_admin_approval_after_user_signup === true);
      }
      if (weights) await setSetting(trx, 'repository_storages_weighted', weights);
      for (const [name, value] of Object.entries(limits) as [RateLimitSetting, number][]) await setSetting(trx, name, value);
    });
    return presentApplicationSetting(await getAllSettings(db), config.storages);
  });
};

export default applicationSettings;
