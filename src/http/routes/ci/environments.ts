/**
 * Environments of a project (lib/api/environments.rb, 15.2; issue 31 item 8): list (by name, by a
 * part of the name, by state), create, update, delete (stopped ones only), stop (playing the stop
 * job of the last deployment), stop the stale ones, and schedule stopped review apps for deletion.
 * Reporters read them; Developers write (project.policy.ts). CI jobs make them too
 * (environments/pipeline-environments.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { EnvironmentRow } from '../../../db/tables/environments.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { ENVIRONMENT_STATES, TIERS } from '../../../domain/environments/environment-rules.ts';
import {
  changeEnvironment, createEnvironment, scheduleReviewAppsDeletion, stopEnvironment, stopStaleEnvironments,
} from '../../../domain/environments/environment-actions.ts';
import {
  deleteEnvironment, findEnvironmentInProject, projectEnvironmentsQuery,
} from '../../../domain/environments/environments.queries.ts';
import { lastSuccessfulDeployments } from '../../../domain/deployments/deployments.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { starCountsOf } from '../../../domain/stars/stars.queries.ts';
import { ApiError, badRequest, forbidden, invalidParams, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { presentBasicProjectDetails } from '../../entities/project.ts';
import {
  EnvironmentBasicSchema, EnvironmentSchema, presentEnvironment, presentEnvironmentBasic,
} from '../../entities/environment.ts';
import { route } from '../../route.ts';
import { presentDeployments } from '../../loaders/deployments.ts';

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const environmentParams = { ...idParam, environment_id: P.integer() };
const writable = {
  external_url: P.optional(P.string({ maxLength: 1024, description: 'where the environment can be seen' })),
  slug: P.optional(P.string({ maxLength: 255, description: 'refused: the slug is made from the name' })),
  tier: P.optional(P.oneOf(TIERS)),
};
const YEAR_MS = 365.25 * 86_400_000;

const environments: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const ciEnv = () => ciEnvFrom(db, config);

  async function projectDetails(ctx: ProjectContext) {
    const starCount = (await starCountsOf(db, [ctx.project.id])).get(ctx.project.id) ?? 0;
    return presentBasicProjectDetails(ctx.project, ctx.namespace, {
      externalUrl: config.externalUrl, sshPort: config.sshPort, readCode: canOnProject(ctx.actor, 'download_code', ctx.project), starCount,
    });
  }

  async function present(ctx: ProjectContext, e: EnvironmentRow) {
    return presentEnvironment(e, await projectDetails(ctx));
  }

  async function loadEnvironment(request: FastifyRequest, input: { id: string; environment_id: number }) {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_environment');
    const environment = await findEnvironmentInProject(db, ctx.project.id, input.environment_id);
    if (!environment) throw recordNotFound();
    return { ctx, environment };
  }

  /** Grape's `absence:` on slug, in the Service's words. */
  function refuseSlug(slug: string | undefined): void {
    if (slug !== undefined) throw invalidParams(['slug is automatically generated and cannot be changed']);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/environments', auth: 'required',
    params: defineParams({
      ...idParam, ...paginationParams,
      name: P.optional(P.name({ description: 'the environment of this name' })),
      search: P.optional(P.name({ description: 'environments whose name contains this' })),
      states: P.optional(P.oneOf(ENVIRONMENT_STATES)),
    }),
    schema: { summary: "A project's environments", tags: ['environments'], response: { 200: Type.Array(EnvironmentSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_environment');
    if (input.name !== undefined && input.search !== undefined) throw invalidParams(['name, search cannot be used together']);
    const rows = await paginate(db, request, reply, projectEnvironmentsQuery(db, ctx.project.id, input));
    const project = await projectDetails(ctx);
    return rows.map((e) => presentEnvironment(e, project));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/environments', auth: 'required',
    params: defineParams({ ...idParam, name: P.string({ maxLength: 1024 }), ...writable }),
    schema: { summary: 'Creates an environment', tags: ['environments'], response: { 201: EnvironmentSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'create_environment');
    refuseSlug(input.slug);
    const result = await createEnvironment(db, ctx.project.id, input);
    if (!result.ok) throw validationFailed(result.errors.errors);
    return reply.code(201).send(await present(ctx, result.environment));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/environments/:environment_id', auth: 'required',
    params: defineParams({ ...environmentParams, name: P.optional(P.string({ maxLength: 1024 })), ...writable }),
    schema: { summary: 'Changes an environment', tags: ['environments'], response: { 200: EnvironmentSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'update_environment');
    const environment = await findEnvironmentInProject(db, ctx.project.id, input.environment_id);
    if (!environment) throw recordNotFound();
    refuseSlug(input.slug);
    const result = await changeEnvironment(db, environment, input);
    if (!result.ok) throw validationFailed(result.errors.errors);
    return present(ctx, result.environment);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/environments/review_apps', auth: 'required',
    params: defineParams({
      ...idParam,
      before: P.optional(P.dateTime({ description: 'only those changed before this (default 30 days ago)' })),
      limit: P.optional(P.integer({ minimum: 1, maximum: 1000, default: 100 })),
      dry_run: P.optional(P.boolean({ default: true, description: 'list what would be scheduled, schedule nothing' })),
    }),
    schema: {
      summary: 'Schedules stopped review apps for deletion a week later', tags: ['environments'],
      response: {
        200: Type.Object({
          scheduled_entries: Type.Array(EnvironmentBasicSchema), unprocessable_entries: Type.Array(EnvironmentBasicSchema),
        }),
      },
    },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_environment');
    // Environments::ScheduleToDeleteReviewAppsService answers 401 with its own text and empty lists.
    if (!canOnProject(ctx.actor, 'destroy_environment', ctx.project)) {
      throw new ApiError(401, {
        message: {
          scheduled_entries: [], unprocessable_entries: [],
          message: 'You do not have permission to destroy environments in this project.',
        },
      });
    }
    // An empty value given is no value: the defaults (and a dry run) hold.
    const before = input.before || new Date(Date.now() - 30 * 86_400_000).toISOString();
    const rows = await scheduleReviewAppsDeletion(db, ctx.project.id, before, input.limit ?? 100, input.dry_run ?? true);
    return { scheduled_entries: rows.map(presentEnvironmentBasic), unprocessable_entries: [] };
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/environments/:environment_id', auth: 'required', params: defineParams(environmentParams),
    schema: { summary: 'Deletes a stopped environment', tags: ['environments'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const { ctx, environment } = await loadEnvironment(request, input);
    // EnvironmentPolicy: only a stopped environment may be removed.
    if (!canOnProject(ctx.actor, 'destroy_environment', ctx.project) || environment.state !== 'stopped') throw forbidden();
    await deleteEnvironment(db, environment.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/environments/:environment_id/stop', auth: 'required',
    params: defineParams({
      ...environmentParams, force: P.optional(P.boolean({ default: false, description: 'stop without the stop jobs' })),
    }),
    schema: { summary: 'Stops an environment', tags: ['environments'], response: { 200: EnvironmentSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, environment } = await loadEnvironment(request, input);
    authorizeProject(ctx, 'stop_environment');
    const stopped = await stopEnvironment(ciEnv(), environment, caller.user.id, input.force);
    return reply.code(200).send(await present(ctx, stopped));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/environments/stop_stale', auth: 'required',
    params: defineParams({ ...idParam, before: P.dateTime({ description: 'stop those neither deployed to nor changed since' }) }),
    schema: {
      summary: 'Stops the environments not deployed to since a date', tags: ['environments'],
      response: { 200: Type.Object({ message: Type.String() }) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'stop_environment');
    const before = Date.parse(input.before);
    // Between ten years and a week ago (lib/api/environments.rb).
    if (before < Date.now() - 10 * YEAR_MS || before > Date.now() - 7 * 86_400_000) {
      throw badRequest('Invalid Date');
    }
    await stopStaleEnvironments(ciEnv(), ctx.project.id, caller.user.id, input.before);
    return reply.code(200).send({ message: 'Successfully requested stop for all stale environments' });
  });

  route(app, {
    method: 'GET', url: '/projects/:id/environments/:environment_id', auth: 'required', params: defineParams(environmentParams),
    schema: { summary: 'An environment with its last deployment', tags: ['environments'], response: { 200: EnvironmentSchema } },
  }, async ({ request, input }) => {
    const { ctx, environment } = await loadEnvironment(request, input);
    const last = (await lastSuccessfulDeployments(db, [environment.id])).get(environment.id);
    const [deployment] = last ? await presentDeployments(db, config.externalUrl, ctx, [last]) : [null];
    return presentEnvironment(environment, await projectDetails(ctx), deployment ?? null);
  });
};

export default environments;
