/**
 * Project hooks (the Service's lib/api/project_hooks.rb): a project's Maintainers (admin_project)
 * list, read, add, change and delete its webhooks, and send a test delivery of one event
 * (POST …/hooks/:hook_id/test/:trigger, TestHooks::ProjectService, run now and answered with
 * its outcome). The token is write-only. Deliveries of real events run as background jobs
 * (domain/web-hooks).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { saveHook, type HookInput } from '../../../domain/web-hooks/manage-hooks.ts';
import { executeHook } from '../../../domain/web-hooks/run-delivery.ts';
import { autoDisablingOn } from '../../../domain/web-hooks/auto-disabling.ts';
import { HOOK_NAMES } from '../../../domain/web-hooks/web-hook-logs.ts';
import { EVENT_HEADERS } from '../../../domain/web-hooks/hook-events.ts';
import { testHookData, TEST_TRIGGERS } from '../../../domain/web-hooks/test-hooks.ts';
import { deleteHook, findHook, hooksQuery, type HookFlag } from '../../../domain/web-hooks/web-hooks.queries.ts';
import { recordNotFound, unprocessable } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { presentProjectHook, ProjectHookSchema } from '../../entities/web-hook.ts';
import { route } from '../../route.ts';

/** The web_hooks url column's bound in the Service (5000 characters). */
export const HOOK_URL_MAX = 5000;

export const PROJECT_HOOK_FLAGS = [
  'push_events', 'issues_events', 'confidential_issues_events', 'merge_requests_events', 'tag_push_events', 'note_events',
  'confidential_note_events', 'job_events', 'pipeline_events', 'wiki_page_events', 'deployment_events', 'releases_events',
] as const satisfies readonly HookFlag[];

const flagParams = Object.fromEntries(
  PROJECT_HOOK_FLAGS.map((f) => [f, P.optional(P.boolean({ description: `trigger the hook on ${f.replaceAll('_', ' ')}` }))]),
) as { [K in (typeof PROJECT_HOOK_FLAGS)[number]]: ReturnType<typeof P.optional<ReturnType<typeof P.boolean>>> };

const properties = {
  url: P.string({ maxLength: HOOK_URL_MAX, description: 'the URL to send the request to' }),
  ...flagParams,
  enable_ssl_verification: P.optional(P.boolean({ description: 'verify the TLS certificate when delivering' })),
  token: P.optional(P.string({ maxLength: 1024, description: 'secret token sent in X-Gitlab-Token; never returned' })),
  push_events_branch_filter: P.optional(P.string({ maxLength: 1024, description: 'trigger push events for matching branches only' })),
};

const projectId = P.string({ description: 'project id or path' });
const hookId = P.integer({ description: 'hook id' });
const params = {
  list: defineParams({ id: projectId, ...paginationParams }),
  one: defineParams({ id: projectId, hook_id: hookId }),
  create: defineParams({ id: projectId, ...properties }),
  update: defineParams({ id: projectId, hook_id: hookId, ...properties }),
  test: defineParams({ id: projectId, hook_id: hookId, trigger: P.oneOf(TEST_TRIGGERS, { description: 'the event to send' }) }),
};

const tags = ['project_hooks'];

type HookParams = { url?: string; token?: string; enable_ssl_verification?: boolean; push_events_branch_filter?: string }
  & Partial<Record<HookFlag, boolean>>;

function hookInput(input: HookParams): HookInput {
  const flags: HookInput['flags'] = {};
  for (const f of PROJECT_HOOK_FLAGS) flags[f] = input[f];
  return {
    url: input.url, token: input.token, enable_ssl_verification: input.enable_ssl_verification,
    push_events_branch_filter: input.push_events_branch_filter, flags,
  };
}

/** The Service answers a refused URL or branch filter with these (project_hooks.rb). */
function saveError(field: 'url' | 'push_events_branch_filter') {
  return unprocessable(field === 'url' ? 'Invalid url given' : 'Invalid branch filter given');
}

const projectHooks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'GET', url: '/projects/:id/hooks', auth: 'required', params: params.list,
    schema: { summary: "A project's hooks", tags, response: { 200: Type.Array(ProjectHookSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const autoDisabling = await autoDisablingOn(db, { project_id: ctx.project.id });
    return (await paginate(db, request, reply, hooksQuery(db, ctx.project.id))).map((row) => presentProjectHook(row, autoDisabling));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/hooks/:hook_id', auth: 'required', params: params.one,
    schema: { summary: 'One project hook', tags, response: { 200: ProjectHookSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const hook = await findHook(db, ctx.project.id, input.hook_id);
    if (!hook) throw recordNotFound();
    return presentProjectHook(hook, await autoDisablingOn(db, hook));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/hooks', auth: 'required', params: params.create,
    schema: { summary: 'Adds a hook to a project', tags, response: { 201: ProjectHookSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const result = await saveHook(db, await sealerFor(config.dataDir), ctx.project.id, null, hookInput(input));
    if (!result.ok) throw saveError(result.field);
    return reply.code(201).send(presentProjectHook(result.row, await autoDisablingOn(db, result.row)));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/hooks/:hook_id', auth: 'required', params: params.update,
    schema: { summary: 'Changes a project hook', tags, response: { 200: ProjectHookSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const hook = await findHook(db, ctx.project.id, input.hook_id);
    if (!hook) throw recordNotFound();
    const result = await saveHook(db, await sealerFor(config.dataDir), ctx.project.id, hook, hookInput(input));
    if (!result.ok) throw saveError(result.field);
    return presentProjectHook(result.row, await autoDisablingOn(db, result.row));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/hooks/:hook_id', auth: 'required', params: params.one,
    schema: { summary: 'Deletes a project hook', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const hook = await findHook(db, ctx.project.id, input.hook_id);
    if (!hook) throw recordNotFound();
    await deleteHook(db, hook.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/hooks/:hook_id/test/:trigger', auth: 'required', params: params.test,
    schema: {
      summary: 'Sends a test delivery of one event to a project hook now',
      tags, response: { 201: Type.Object({ message: Type.String() }) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const hook = await findHook(db, ctx.project.id, input.hook_id);
    if (!hook) throw recordNotFound();
    const env = ciEnvFrom(db, config);
    const test = await testHookData(env, ctx.project, input.trigger, caller.user.id);
    if (!test.ok) throw unprocessable(test.message);
    let outcome: { ok: boolean; message: string };
    try {
      const result = await executeHook({ db, sealer: () => sealerFor(config.dataDir), externalUrl: config.externalUrl }, hook,
        EVENT_HEADERS[input.trigger], test.data, { trigger: HOOK_NAMES[input.trigger] });
      // Only a 2xx answer passes the test (the Service's (200..299).cover?); the message is the answer's body.
      outcome = { ok: result.status >= 200 && result.status < 300, message: result.body || `${result.status}` };
    } catch (err) {
      outcome = { ok: false, message: err instanceof Error ? err.message : String(err) };
    }
    if (!outcome.ok) throw unprocessable(outcome.message);
    return reply.code(201).send({ message: '201 Created' });
  });
};

export default projectHooks;
