/**
 * System hooks (the Service's lib/api/system_hooks.rb, administrators only): list, read, add,
 * test (POST /hooks/:id sends the fixed project_create sample now and answers it) and delete.
 * A refused URL is a validation error (render_validation_error!). The token is write-only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { saveHook } from '../../../domain/web-hooks/manage-hooks.ts';
import { executeHook } from '../../../domain/web-hooks/run-delivery.ts';
import { SYSTEM_HOOK_EVENT } from '../../../domain/web-hooks/hook-events.ts';
import { SYSTEM_HOOK_SAMPLE } from '../../../domain/web-hooks/test-hooks.ts';
import { deleteHook, findHook, hooksQuery } from '../../../domain/web-hooks/web-hooks.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { HookSchema, presentHook } from '../../entities/web-hook.ts';
import { route } from '../../route.ts';
import { autoDisablingOn } from '../../../domain/web-hooks/auto-disabling.ts';
import { SYSTEM_HOOKS_TRIGGER } from '../../../domain/web-hooks/web-hook-logs.ts';
import { HOOK_URL_MAX } from '../projects/hooks.ts';

const hookId = P.integer({ description: 'system hook id' });
const flag = (what: string) => P.optional(P.boolean({ description: `trigger the hook on ${what}` }));
const params = {
  list: defineParams({ ...paginationParams }),
  one: defineParams({ id: hookId }),
  create: defineParams({
    url: P.string({ maxLength: HOOK_URL_MAX, description: 'the URL to send the request to' }),
    token: P.optional(P.string({ maxLength: 1024, description: 'secret token sent in X-Gitlab-Token; never returned' })),
    push_events: flag('push events'),
    tag_push_events: flag('tag push events'),
    merge_requests_events: flag('merge request events'),
    repository_update_events: flag('repository update events'),
    enable_ssl_verification: P.optional(P.boolean({ description: 'verify the TLS certificate when delivering' })),
  }),
};

const tags = ['system_hooks'];

const systemHooks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'GET', url: '/hooks', auth: 'required', params: params.list,
    schema: { summary: 'The system hooks (administrators)', tags, response: { 200: Type.Array(HookSchema) } },
  }, async ({ request, reply }) => {
    authenticatedAsAdmin(request);
    const autoDisabling = await autoDisablingOn(db, { project_id: null });
    return (await paginate(db, request, reply, hooksQuery(db, null))).map((row) => presentHook(row, autoDisabling));
  });

  route(app, {
    method: 'GET', url: '/hooks/:id', auth: 'required', params: params.one,
    schema: { summary: 'One system hook (administrators)', tags, response: { 200: HookSchema } },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const hook = await findHook(db, null, input.id);
    if (!hook) throw notFound('System hook');
    return presentHook(hook, await autoDisablingOn(db, hook));
  });

  route(app, {
    method: 'POST', url: '/hooks', auth: 'required', params: params.create,
    schema: { summary: 'Adds a system hook (administrators)', tags, response: { 201: HookSchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const result = await saveHook(db, await sealerFor(config.dataDir), null, null, {
      url: input.url, token: input.token, enable_ssl_verification: input.enable_ssl_verification,
      flags: {
        push_events: input.push_events, tag_push_events: input.tag_push_events,
        merge_requests_events: input.merge_requests_events, repository_update_events: input.repository_update_events,
      },
    });
    if (!result.ok) throw validationFailed({ [result.field]: [result.message] });
    return reply.code(201).send(presentHook(result.row, await autoDisablingOn(db, result.row)));
  });

  route(app, {
    method: 'POST', url: '/hooks/:id', auth: 'required', params: params.one,
    schema: {
      summary: 'Sends the sample project_create event to a system hook now (administrators)',
      tags, response: { 201: Type.Object({}, { additionalProperties: true }) },
    },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const hook = await findHook(db, null, input.id);
    if (!hook) throw notFound('System hook');
    // The Service answers with the sample whatever the receiver did (SystemHook#execute's outcome is not read).
    const deps = { db, sealer: () => sealerFor(config.dataDir), externalUrl: config.externalUrl };
    await executeHook(deps, hook, SYSTEM_HOOK_EVENT, SYSTEM_HOOK_SAMPLE, { trigger: SYSTEM_HOOKS_TRIGGER })
      .catch((err: unknown) => request.log.warn({ err, hookId: hook.id }, 'system hook test delivery failed'));
    return reply.code(201).send(SYSTEM_HOOK_SAMPLE);
  });

  route(app, {
    method: 'DELETE', url: '/hooks/:id', auth: 'required', params: params.one,
    schema: { summary: 'Deletes a system hook (administrators)', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const hook = await findHook(db, null, input.id);
    if (!hook) throw notFound('System hook');
    await deleteHook(db, hook.id);
    return reply.code(204).send();
  });
};

export default systemHooks;
