/**
 * Pipeline triggers (lib/api/ci/triggers.rb, 15.2; issue 20 item 5): a project's trigger tokens,
 * managed by Maintainers (admin_build; changing or deleting one also takes being its owner,
 * admin_trigger), and POST /projects/:id/trigger/pipeline, which anyone holding a trigger token
 * or a running job's CI_JOB_TOKEN may call (no other credential is needed).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findPipelineInProject } from '../../../domain/pipelines/pipelines.queries.ts';
import { findProjectByIdOrPath } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { createTrigger, descriptionErrors } from '../../../domain/triggers/manage-triggers.ts';
import {
  deleteTrigger, findTriggerInProject, projectTriggersQuery, updateTriggerDescription,
} from '../../../domain/triggers/triggers.queries.ts';
import { triggerPipeline } from '../../../domain/triggers/trigger-pipeline.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { isStorableId } from '../../../db/constraints.ts';
import type { CiTriggerRow } from '../../../db/tables/ci-variables.ts';
import { ApiError, forbidden, notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { TriggerSchema, presentTrigger } from '../../entities/trigger.ts';
import { PipelineSchema, presentPipeline } from '../../entities/pipeline.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const triggerParams = defineParams({ ...idParam, trigger_id: P.integer() });
const runParams = defineParams({
  ...idParam,
  ref: P.string({ description: 'branch or tag' }),
  token: P.string({ description: 'a trigger token, or a CI job token' }),
  variables: P.optional(P.hash({ description: 'variables[KEY]=value' })),
});
/** Refs longer than this are no git ref; and none reaches git with a NUL byte. */
const MAX_REF = 1024;

const triggers: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function loadTrigger(
    request: FastifyRequest, input: { id: string; trigger_id: number },
  ): Promise<{ ctx: ProjectContext; trigger: CiTriggerRow }> {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_build');
    const trigger = isStorableId(input.trigger_id) ? await findTriggerInProject(db, ctx.project.id, input.trigger_id) : undefined;
    if (!trigger) throw recordNotFound();
    return { ctx, trigger };
  }

  /** admin_trigger: the trigger's owner (administrators too). */
  function authorizeOwner(caller: Caller, trigger: CiTriggerRow): void {
    const user = caller.user;
    if (trigger.owner_id !== user.id && user.admin !== 1) throw forbidden();
  }

  async function present(caller: Caller, rows: CiTriggerRow[]) {
    const sealer = await sealerFor(config.dataDir);
    const owners = new Map<number, Awaited<ReturnType<typeof findUserById>>>();
    for (const id of new Set(rows.flatMap((r) => (r.owner_id === null ? [] : [r.owner_id])))) owners.set(id, await findUserById(db, id));
    return rows.map(
      (r) => presentTrigger(
        r, sealer.open(r.encrypted_token), (r.owner_id === null ? null : owners.get(r.owner_id)) ?? null,
        caller.user.id, config.externalUrl,
      ),
    );
  }

  route(app, {
    method: 'GET', url: '/projects/:id/triggers', auth: 'required', params: defineParams({ ...idParam, ...paginationParams }),
    schema: { summary: "A project's pipeline trigger tokens", tags: ['triggers'], response: { 200: Type.Array(TriggerSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_build');
    return present(caller, await paginate(db, request, reply, projectTriggersQuery(db, ctx.project.id)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/triggers/:trigger_id', auth: 'required', params: triggerParams,
    schema: { summary: 'A pipeline trigger token', tags: ['triggers'], response: { 200: TriggerSchema } },
  }, async ({ request, input, caller }) => {
    const { trigger } = await loadTrigger(request, input);
    return (await present(caller, [trigger]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/triggers', auth: 'required', params: defineParams({ ...idParam, description: P.string() }),
    schema: { summary: 'Create a pipeline trigger token', tags: ['triggers'], response: { 201: TriggerSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_build');
    const errors = descriptionErrors(input.description);
    if (errors) throw validationFailed(errors);
    const { row } = await createTrigger(db, await sealerFor(config.dataDir), ctx.project.id, caller.user.id, input.description);
    return reply.code(201).send((await present(caller, [row]))[0]);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/triggers/:trigger_id', auth: 'required', params: defineParams({
      ...idParam, trigger_id: P.integer(), description: P.optional(P.string()),
    }),
    schema: { summary: "Change a pipeline trigger token's description", tags: ['triggers'], response: { 200: TriggerSchema } },
  }, async ({ request, input, caller }) => {
    const { trigger } = await loadTrigger(request, input);
    authorizeOwner(caller, trigger);
    const description = input.description;
    if (description === undefined) return (await present(caller, [trigger]))[0];
    const errors = descriptionErrors(description);
    if (errors) throw validationFailed(errors);
    const updated = await updateTriggerDescription(db, trigger.id, description);
    if (!updated) throw recordNotFound();
    return (await present(caller, [updated]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/triggers/:trigger_id', auth: 'required', params: triggerParams,
    schema: { summary: 'Delete a pipeline trigger token', tags: ['triggers'] },
  }, async ({ request, reply, input, caller }) => {
    const { trigger } = await loadTrigger(request, input);
    authorizeOwner(caller, trigger);
    checkUnmodifiedSince(request, trigger.updated_at);
    await deleteTrigger(db, trigger.id);
    return reply.code(204).send();
  });

  async function run(reply: FastifyReply, input: { id: string; ref: string; token: string; variables?: Record<string, string> }) {
    // The holder of a token needs no other credential: the project is found as the Service's
    // find_project does, and a token that does not open it answers the same 404 as no project.
    const project = await findProjectByIdOrPath(db, input.id);
    if (!project) throw notFound();
    if (input.ref === '' || input.ref.length > MAX_REF || input.ref.includes('\0')) {
      throw validationFailed({ base: ['Reference not found'] });
    }
    const lineage = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)?.lineage ?? [];
    const result = await triggerPipeline(ciEnvFrom(db, config), {
      project, lineage, token: input.token.slice(0, 1024), ref: input.ref, variables: input.variables ?? {},
    });
    if (!result.ok) {
      if (result.status === 404) throw notFound();
      if (result.status === 401) throw new ApiError(401, { message: result.message });
      throw validationFailed(result.errors);
    }
    const pipeline = (await findPipelineInProject(db, project.id, result.pipeline.id))!;
    const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!;
    const webUrl = `${config.externalUrl}/${ns.fullPath}/${project.path}`;
    const user = pipeline.user_id === null ? null : await findUserById(db, pipeline.user_id) ?? null;
    return reply.code(201).send(presentPipeline(pipeline, webUrl, user, config.externalUrl));
  }

  route(app, {
    method: 'POST', url: '/projects/:id/trigger/pipeline', auth: 'optional', params: runParams,
    schema: { summary: 'Create a pipeline with a trigger token or a CI job token', tags: ['triggers'], response: { 201: PipelineSchema } },
  }, ({ reply, input }) => run(reply, input));

  // The webhook form, with the ref in the path (`/ref/:ref/trigger/pipeline?token=…`).
  route(app, {
    method: 'POST', url: '/projects/:id/ref/:ref/trigger/pipeline', auth: 'optional', params: runParams,
    schema: { summary: 'Create a pipeline with a trigger token (ref in the path)', tags: ['triggers'], response: { 201: PipelineSchema } },
  }, ({ reply, input }) => run(reply, input));
};

export default triggers;
