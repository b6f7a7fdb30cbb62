/**
 * Pipeline schedules (lib/api/ci/pipeline_schedules.rb, 15.2, with the schedule's pipelines list of
 * 15.3; issue 31, item 7). Who may do what (ProjectPolicy and Ci::PipelineSchedulePolicy):
 *
 * - read (list, show, its pipelines): read_pipeline_schedule, which goes with read_build
 *   (Reporter, or anyone on a project whose builds are public);
 * - create: Developer (create_pipeline_schedule); the caller owns the new schedule;
 * - update, and change its variables: the owner while a Developer, or an administrator
 *   (update_pipeline_schedule) — a Maintainer takes ownership first;
 * - delete, delete a variable, read its variables: Maintainers, or the owner while a Developer
 *   (admin_pipeline_schedule);
 * - take ownership: admin_pipeline_schedule, for someone not already the owner;
 * - play: Developer (create_pipeline) who may update the ref when it is protected; at most once a
 *   minute per user and schedule (the Service's play_pipeline_schedule rate limit: 429).
 *
 * A schedule the caller may not read is `404 Pipeline Schedule Not Found`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PipelineScheduleRow, PipelineScheduleVariableRow } from '../../../db/tables/pipeline-schedules.ts';
import type { UserRow } from '../../../db/types.ts';
import { isStorableId, isStorableText } from '../../../db/constraints.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { VARIABLE_TYPES } from '../../../domain/ci-variables/variable-rules.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import {
  changeSchedule, changeScheduleVariable, createSchedule, createScheduleVariable, type Result,
} from '../../../domain/pipeline-schedules/manage-schedules.ts';
import {
  deleteSchedule, deleteScheduleVariable, findScheduleInProject, findScheduleVariable, lastPipelines,
  projectSchedulesQuery, schedulePipelinesQuery, scheduleVariables, updateSchedule,
} from '../../../domain/pipeline-schedules/pipeline-schedules.queries.ts';
import { mayRunOnRef, queuePlay, refIsTag } from '../../../domain/pipeline-schedules/run-schedule.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { ApiError, forbidden, invalidParams, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import {
  PipelineScheduleDetailsSchema, PipelineScheduleSchema, ScheduleVariableSchema, presentSchedule, presentScheduleDetails,
  presentScheduleVariable,
} from '../../entities/pipeline-schedule.ts';
import { PipelineBasicSchema, presentPipelineBasic } from '../../entities/pipeline.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';
import { projectWebUrl } from './pipelines.ts';

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const scheduleParam = { ...idParam, pipeline_schedule_id: P.integer({ description: 'ID of the pipeline schedule' }) };
const variableParam = { ...scheduleParam, key: P.string({ description: 'key of the schedule variable' }) };
const tags = ['pipeline_schedules'];

const SCHEDULE_NOT_FOUND = 'Pipeline Schedule';
const VARIABLE_NOT_FOUND = 'Pipeline Schedule Variable';

const pipelineSchedules: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const env = ciEnvFrom(db, config);

  const isOwner = (caller: Caller, s: PipelineScheduleRow) => s.owner_id === caller.user.id;
  /** admin_pipeline_schedule (also read_pipeline_schedule_variables). */
  const mayAdmin = (ctx: ProjectContext, caller: Caller, s: PipelineScheduleRow) => canOnProject(ctx.actor, 'admin_build', ctx.project)
    || (canOnProject(ctx.actor, 'update_build', ctx.project) && isOwner(caller, s));
  /** update_pipeline_schedule: administrators, or the owner while a Developer. */
  const mayUpdate = (ctx: ProjectContext, caller: Caller, s: PipelineScheduleRow) => caller.user.admin === 1
    || (isOwner(caller, s) && canOnProject(ctx.actor, 'update_build', ctx.project));

  /** The pipeline_schedule helper: the project's schedule, 404 when missing or not readable. */
  async function loadSchedule(request: FastifyRequest, input: { id: string; pipeline_schedule_id: number }) {
    const ctx = await loadProject(request, input.id);
    const schedule = isStorableId(input.pipeline_schedule_id)
      ? await findScheduleInProject(db, ctx.project.id, input.pipeline_schedule_id) : undefined;
    if (!schedule || !canOnProject(ctx.actor, 'read_build', ctx.project)) throw notFound(SCHEDULE_NOT_FOUND);
    return { ctx, schedule };
  }

  async function owners(rows: PipelineScheduleRow[]): Promise<Map<number, UserRow>> {
    const out = new Map<number, UserRow>();
    for (const id of new Set(rows.flatMap((r) => (r.owner_id === null ? [] : [r.owner_id])))) {
      const user = await findUserById(db, id);
      if (user) out.set(id, user);
    }
    return out;
  }

  async function details(ctx: ProjectContext, caller: Caller, s: PipelineScheduleRow) {
    const [byId, last] = await Promise.all([owners([s]), lastPipelines(db, [s.id])]);
    let variables = null;
    if (mayAdmin(ctx, caller, s)) {
      const sealer = await sealerFor(config.dataDir);
      variables = (await scheduleVariables(db, s.id)).map((v) => presentScheduleVariable(v, sealer.open(v.encrypted_value)));
    }
    return presentScheduleDetails(s, s.owner_id === null ? null : byId.get(s.owner_id) ?? null, config.externalUrl, {
      lastPipeline: last.get(s.id) ?? null, projectWebUrl: projectWebUrl(config.externalUrl, ctx), variables,
    });
  }

  function unwrap<T>(result: Result<T>): T {
    if (!result.ok) throw validationFailed(result.errors);
    return result.value;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/pipeline_schedules', auth: 'required', params: defineParams({
      ...idParam, scope: P.optional(P.oneOf(['active', 'inactive'] as const, { description: 'active or inactive schedules only' })),
      ...paginationParams,
    }),
    schema: { summary: "A project's pipeline schedules", tags, response: { 200: Type.Array(PipelineScheduleSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const rows = await paginate(db, request, reply, projectSchedulesQuery(db, ctx.project.id, input.scope));
    const byId = await owners(rows);
    return rows.map((r) => presentSchedule(r, r.owner_id === null ? null : byId.get(r.owner_id) ?? null, config.externalUrl));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id', auth: 'required', params: defineParams(scheduleParam),
    schema: { summary: 'A pipeline schedule', tags, response: { 200: PipelineScheduleDetailsSchema } },
  }, async ({ request, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    return details(ctx, caller, schedule);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/pipelines', auth: 'required',
    params: defineParams({ ...scheduleParam, ...paginationParams }),
    schema: { summary: 'The pipelines a schedule created', tags, response: { 200: Type.Array(PipelineBasicSchema) } },
  }, async ({ request, reply, input }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    const rows = await paginate(db, request, reply, schedulePipelinesQuery(db, schedule.id));
    const webUrl = projectWebUrl(config.externalUrl, ctx);
    return rows.map((p) => presentPipelineBasic(p, webUrl));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipeline_schedules', auth: 'required', params: defineParams({
      ...idParam,
      description: P.string({ description: 'description of the schedule' }),
      ref: P.string({ description: 'branch or tag name' }),
      cron: P.string({ description: 'cron line, e.g. `0 1 * * *`' }),
      cron_timezone: P.optional(P.string({ default: 'UTC', description: 'ActiveSupport time zone name or IANA identifier' })),
      active: P.optional(P.boolean({ default: true })),
    }),
    schema: { summary: 'Create a pipeline schedule', tags, response: { 201: PipelineScheduleDetailsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'update_build');
    // `ref` is declared allow_blank: false.
    if (input.ref.trim() === '') throw invalidParams(['ref is empty']);
    const row = unwrap(await createSchedule(db, ctx.project.id, caller.user.id, {
      description: input.description, ref: input.ref, cron: input.cron, cron_timezone: input.cron_timezone, active: input.active,
    }));
    return reply.code(201).send(await details(ctx, caller, row));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id', auth: 'required', params: defineParams({
      ...scheduleParam,
      description: P.optional(P.string()),
      ref: P.optional(P.string()),
      cron: P.optional(P.string()),
      cron_timezone: P.optional(P.string()),
      active: P.optional(P.boolean()),
    }),
    schema: { summary: 'Change a pipeline schedule (its next run is recomputed)', tags, response: { 200: PipelineScheduleDetailsSchema } },
  }, async ({ request, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    if (!mayUpdate(ctx, caller, schedule)) throw forbidden();
    const row = unwrap(await changeSchedule(db, schedule, {
      description: input.description, ref: input.ref, cron: input.cron, cron_timezone: input.cron_timezone, active: input.active,
    }));
    return details(ctx, caller, row);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/take_ownership', auth: 'required',
    params: defineParams(scheduleParam),
    schema: { summary: 'Become the owner of a pipeline schedule', tags, response: { 201: PipelineScheduleDetailsSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    // take_ownership_pipeline_schedule (15.2): admin_pipeline_schedule, and not the owner already.
    if (!mayAdmin(ctx, caller, schedule) || isOwner(caller, schedule)) throw forbidden();
    const row = await updateSchedule(db, schedule.id, { owner_id: caller.user.id });
    if (!row) throw notFound(SCHEDULE_NOT_FOUND);
    return reply.code(201).send(await details(ctx, caller, row));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id', auth: 'required', params: defineParams(scheduleParam),
    schema: { summary: 'Delete a pipeline schedule (its pipelines stay)', tags },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    if (!mayAdmin(ctx, caller, schedule)) throw forbidden();
    checkUnmodifiedSince(request, schedule.updated_at);
    await deleteSchedule(db, schedule.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/play', auth: 'required',
    params: defineParams(scheduleParam),
    schema: { summary: 'Run a pipeline schedule now (its next run stays as it is)', tags },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    // play_pipeline_schedule: create_pipeline, prevented on a protected ref the caller may not update.
    if (!canOnProject(ctx.actor, 'update_build', ctx.project)) throw forbidden();
    const tag = await refIsTag(env, ctx.project, schedule.ref);
    if (!await mayRunOnRef(db, ctx.actor, ctx.project, schedule.ref, tag)) throw forbidden();
    if (!await queuePlay(db, app.jobs, schedule, caller.user.id)) {
      throw new ApiError(
        429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }, { 'retry-after': '60' },
      );
    }
    // created! (reference §6.1)
    return reply.code(201).send({ message: '201 Created' });
  });

  // ---- variables

  async function loadVariable(request: FastifyRequest, input: { id: string; pipeline_schedule_id: number; key: string }) {
    const found = await loadSchedule(request, input);
    return { ...found, key: input.key };
  }

  async function findVariable(scheduleId: number, key: string): Promise<PipelineScheduleVariableRow> {
    const row = isStorableText(key) ? await findScheduleVariable(db, scheduleId, key) : undefined;
    if (!row) throw notFound(VARIABLE_NOT_FOUND);
    return row;
  }

  async function presentVariable(row: PipelineScheduleVariableRow) {
    return presentScheduleVariable(row, (await sealerFor(config.dataDir)).open(row.encrypted_value));
  }

  route(app, {
    method: 'GET', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/variables/:key', auth: 'required',
    params: defineParams(variableParam),
    schema: { summary: 'A pipeline schedule variable', tags, response: { 200: ScheduleVariableSchema } },
  }, async ({ request, input, caller }) => {
    const { ctx, schedule, key } = await loadVariable(request, input);
    if (!mayAdmin(ctx, caller, schedule)) throw forbidden();
    return presentVariable(await findVariable(schedule.id, key));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/variables', auth: 'required',
    params: defineParams({
      ...scheduleParam,
      key: P.string({ description: 'letters, digits and _ only, at most 255 characters' }),
      value: P.string(),
      variable_type: P.optional(P.oneOf(VARIABLE_TYPES, { default: 'env_var' })),
    }),
    schema: { summary: 'Create a pipeline schedule variable', tags, response: { 201: ScheduleVariableSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, schedule } = await loadSchedule(request, input);
    // set_pipeline_variables (Developer), then update_pipeline_schedule.
    authorizeProject(ctx, 'update_build');
    if (!mayUpdate(ctx, caller, schedule)) throw forbidden();
    const row = unwrap(await createScheduleVariable(db, await sealerFor(config.dataDir), schedule.id, {
      key: input.key, value: input.value, variable_type: input.variable_type,
    }));
    return reply.code(201).send(await presentVariable(row));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/variables/:key', auth: 'required',
    params: defineParams({ ...variableParam, value: P.optional(P.string()), variable_type: P.optional(P.oneOf(VARIABLE_TYPES)) }),
    schema: { summary: 'Change a pipeline schedule variable', tags, response: { 200: ScheduleVariableSchema } },
  }, async ({ request, input, caller }) => {
    const { ctx, schedule, key } = await loadVariable(request, input);
    authorizeProject(ctx, 'update_build');
    if (!mayUpdate(ctx, caller, schedule)) throw forbidden();
    const variable = await findVariable(schedule.id, key);
    const row = unwrap(await changeScheduleVariable(db, await sealerFor(config.dataDir), variable, {
      value: input.value, variable_type: input.variable_type,
    }));
    return presentVariable(row);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/pipeline_schedules/:pipeline_schedule_id/variables/:key', auth: 'required',
    params: defineParams(variableParam),
    schema: { summary: 'Delete a pipeline schedule variable (answers it, 202)', tags, response: { 202: ScheduleVariableSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, schedule, key } = await loadVariable(request, input);
    authorizeProject(ctx, 'update_build');
    if (!mayAdmin(ctx, caller, schedule)) throw forbidden();
    const variable = await findVariable(schedule.id, key);
    await deleteScheduleVariable(db, variable.id);
    return reply.code(202).send(await presentVariable(variable));
  });
};

export default pipelineSchedules;
