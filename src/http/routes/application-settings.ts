/**
 * GET/PUT /application/settings (administrators; the Service's lib/api/settings.rb) with the
 * settings kiln has. `repository_storages_weighted` steers new repositories between shards, as
 * the spec advises before a bulk storage move; a PUT names the shards whose weight changes and
 * keeps the others. Invalid weights answer the Service's model errors (400 `{"message":
 * {"repository_storages_weighted": [...]}}`); nothing is written unless every value is valid.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { getAllSettings, setSetting } from '../../domain/settings/settings.queries.ts';
import { authenticatedAsAdmin } from '../auth/admin.ts';
import { invalidParams, validationFailed } from '../errors.ts';
import { defineParams, P } from '../params.ts';
import { ApplicationSettingSchema, presentApplicationSetting } from '../entities/application-setting.ts';

const SETTINGS = ['require_admin_approval_after_user_signup', 'repository_storages_weighted'];

const updateParams = defineParams({
  require_admin_approval_after_user_signup: P.optional(P.boolean()),
  repository_storages_weighted: P.optional(P.hash({ description: 'shard name → weight 0–100 for new repositories' })),
}, { atLeastOneOf: [SETTINGS] });

const applicationSettings: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['application settings'];
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  app.get('/application/settings', {
    config: { auth: 'required' },
    schema: { summary: 'The instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async () => presentApplicationSetting(await getAllSettings(db), config.storages));

  app.put('/application/settings', {
    config: { auth: 'required', params: updateParams },
    schema: { summary: 'Change instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async (request) => {
    const input = request.input as { require_admin_approval_after_user_signup?: boolean | null; repository_storages_weighted?: Record<string, string> | null };
    if (input.require_admin_approval_after_user_signup === null) throw invalidParams(['require_admin_approval_after_user_signup is invalid']);
    if (input.repository_storages_weighted === null) throw invalidParams(['repository_storages_weighted is invalid']);
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
    });
    return presentApplicationSetting(await getAllSettings(db), config.storages);
  });
};

export default applicationSettings;
