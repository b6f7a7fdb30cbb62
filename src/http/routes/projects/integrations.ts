/**
 * Project integrations (the Service's lib/api/integrations.rb), under `/projects/:id/integrations`
 * and its older name `/projects/:id/services` (kept in API v4 for clients such as python-gitlab):
 * a project's Maintainers (admin_project) list the active ones, read one (a kind never set up
 * reads as inactive), set one up or change it with a PUT per kind (it becomes active; settings
 * not sent are kept), and turn one off with a DELETE (inactive, settings cleared). Secret
 * settings are write-only. Only the kinds kiln carries out exist (domain/integrations/catalog.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { INTEGRATIONS, INTEGRATION_SLUGS, integrationKind, type IntegrationKind } from '../../../domain/integrations/catalog.ts';
import { activeIntegrations, findIntegration } from '../../../domain/integrations/integrations.queries.ts';
import {
  deactivateIntegration, saveIntegration, settingsProblem, type IntegrationInput, type SettingValue,
} from '../../../domain/integrations/manage-integrations.ts';
import { badRequestMessage, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import {
  presentIntegration, presentIntegrationBasic, ProjectIntegrationBasicSchema, ProjectIntegrationSchema,
} from '../../entities/integration.ts';
import { route } from '../../route.ts';

const tags = ['integrations'];
const projectId = P.string({ description: 'project id or path' });
/** Bounds of the settings' text (the Service keeps them in a text column; these are far above any real value). */
const SETTING_MAX = 4096;

function settingParam(s: IntegrationKind['settings'][number]): TSchema {
  const schema = s.type === 'boolean' ? P.boolean({ description: s.description })
    : s.type === 'choice' ? P.oneOf(s.choices ?? [], { description: s.description })
      : P.string({ maxLength: SETTING_MAX, description: s.description });
  return s.required ? schema : P.optional(schema);
}

function kindParams(kind: IntegrationKind) {
  const props: Record<string, TSchema> = { id: projectId };
  for (const s of kind.settings) props[s.name] = settingParam(s);
  for (const e of kind.events) props[e] = P.optional(P.boolean({ description: `trigger the integration on ${e.replaceAll('_', ' ')}` }));
  return defineParams(props);
}

function inputOf(kind: IntegrationKind, input: Record<string, unknown>): IntegrationInput {
  const settings: IntegrationInput['settings'] = {};
  for (const s of kind.settings) settings[s.name] = input[s.name] as SettingValue | null | undefined;
  const events: IntegrationInput['events'] = {};
  for (const e of kind.events) events[e] = input[e] as boolean | null | undefined;
  return { settings, events };
}

const listParams = defineParams({ id: projectId });
const oneParams = defineParams({ id: projectId, slug: P.oneOf(INTEGRATION_SLUGS, { description: 'the integration' }) });

const integrations: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  for (const path of ['services', 'integrations']) {
    route(app, {
      method: 'GET', url: `/projects/:id/${path}`, auth: 'required', params: listParams,
      schema: { summary: "A project's active integrations", tags, response: { 200: Type.Array(ProjectIntegrationBasicSchema) } },
    }, async ({ request, input }) => {
      const ctx = await loadProject(request, input.id);
      authorizeProject(ctx, 'admin_project');
      const rows = await activeIntegrations(db, ctx.project.id);
      return rows.flatMap((row) => {
        const kind = integrationKind(row.type);
        return kind ? [presentIntegrationBasic(kind, row)] : [];
      });
    });

    route(app, {
      method: 'GET', url: `/projects/:id/${path}/:slug`, auth: 'required', params: oneParams,
      schema: {
        summary: "One of a project's integrations and its settings (secrets left out)", tags, response: { 200: ProjectIntegrationSchema },
      },
    }, async ({ request, input }) => {
      const ctx = await loadProject(request, input.id);
      authorizeProject(ctx, 'admin_project');
      const kind = integrationKind(input.slug);
      if (!kind) throw recordNotFound();
      return presentIntegration(kind, await findIntegration(db, ctx.project.id, kind.slug));
    });

    for (const kind of INTEGRATIONS) {
      route(app, {
        method: 'PUT', url: `/projects/:id/${path}/${kind.slug}`, auth: 'required', params: kindParams(kind),
        schema: { summary: `Sets up or changes the ${kind.title} integration of a project`, tags, response: { 200: ProjectIntegrationSchema } },
      }, async ({ request, input }) => {
        const fields = input as Record<string, unknown> & { id: string };
        const ctx = await loadProject(request, fields.id);
        authorizeProject(ctx, 'admin_project');
        const wanted = inputOf(kind, fields);
        // A refused save answers as the Service's failed `integration.update`: 400 Bad Request.
        const problem = await settingsProblem(db, kind, wanted);
        if (problem) {
          request.log.info({ integration: kind.slug, problem }, 'integration settings refused');
          throw badRequestMessage('400 Bad Request');
        }
        const existing = await findIntegration(db, ctx.project.id, kind.slug);
        const row = await saveIntegration(db, await sealerFor(config.dataDir), ctx.project.id, kind, existing, wanted);
        return presentIntegration(kind, row);
      });
    }

    route(app, {
      method: 'DELETE', url: `/projects/:id/${path}/:slug`, auth: 'required', params: oneParams,
      schema: { summary: "Turns off a project's integration and clears its settings", tags, response: { 204: Type.Null() } },
    }, async ({ request, reply, input }) => {
      const ctx = await loadProject(request, input.id);
      authorizeProject(ctx, 'admin_project');
      const kind = integrationKind(input.slug);
      if (!kind) throw recordNotFound();
      await deactivateIntegration(db, ctx.project.id, kind);
      return reply.code(204).send();
    });
  }
};

export default integrations;
