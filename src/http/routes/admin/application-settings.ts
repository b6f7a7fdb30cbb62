/**
 * GET/PUT /application/settings (administrators; the Service's lib/api/settings.rb): every
 * setting of the catalogue (domain/settings/catalogue.ts), validated with its Grape type and the
 * model's bounds (settings-input.ts) and written in one transaction, nothing unless every value
 * is valid. `repository_storages_weighted` names the shards whose weight changes and keeps the
 * others; invalid weights answer the Service's model errors (400 `{"message":
 * {"repository_storages_weighted": [...]}}`).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Settings } from '../../../domain/settings/catalogue.ts';
import { currentSettings, writeSettings } from '../../../domain/settings/settings.ts';
import { findNamespaceByFullPath } from '../../../domain/namespaces/namespaces.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { validationFailed } from '../../errors.ts';
import { ApplicationSettingSchema, presentApplicationSetting } from '../../entities/application-setting.ts';
import { route } from '../../route.ts';
import { settingsChange, updateParams } from './settings-input.ts';

const applicationSettings: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['application settings'];
  const host = new URL(config.externalUrl).hostname;
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  async function present(settings: Settings) {
    const path = settings.performance_bar_allowed_group_path;
    const group = path ? await findNamespaceByFullPath(db, path) : undefined;
    return presentApplicationSetting(settings, {
      shards: config.storages, host, performanceBarGroupId: group?.kind === 'group' ? group.id : null,
    });
  }

  route(app, {
    method: 'GET', url: '/application/settings', auth: 'required',
    schema: { summary: 'The instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async (_context) => present(await currentSettings(db)));

  route(app, {
    method: 'PUT', url: '/application/settings', auth: 'required', params: updateParams,
    schema: { summary: 'Change instance settings (administrators)', tags, response: { 200: ApplicationSettingSchema } },
    preValidation: adminOnly,
  }, async ({ input }) => {
    const change = settingsChange(input);
    const current = await currentSettings(db);
    const names = new Set(config.storages.map((s) => s.name));
    if (change.storages && change.weights === undefined) {
      const unknown = change.storages.filter((name) => !names.has(name));
      if (unknown.length > 0) throw validationFailed({ repository_storages: [`can't include: ${unknown.join(', ')}`] });
      change.values.repository_storages_weighted = Object.fromEntries(
        config.storages.map((s) => [s.name, change.storages!.includes(s.name) ? 100 : 0]),
      );
    }
    if (change.weights !== undefined) {
      const messages: string[] = [];
      const unknown = Object.keys(change.weights).filter((name) => !names.has(name));
      if (unknown.length > 0) messages.push(`can't include: ${unknown.join(', ')}`);
      const weights = { ...current.repository_storages_weighted };
      for (const [name, raw] of Object.entries(change.weights)) {
        if (!/^\s*\d+\s*$/.test(raw)) messages.push(`value for '${name}' must be an integer`);
        else if (Number(raw) > 100) messages.push(`value for '${name}' must be between 0 and 100`);
        else weights[name] = Number(raw);
      }
      if (messages.length > 0) throw validationFailed({ repository_storages_weighted: messages });
      change.values.repository_storages_weighted = weights;
    }
    await writeSettings(db, change.values);
    return present(await currentSettings(db));
  });
};

export default applicationSettings;
