/**
 * A project's runners (the Service's lib/api/ci/runners.rb, 15.2; spec, Deprecations: GET and
 * POST /projects/:id/runners): the runners available to it (its own project runners, the group
 * runners of its groups, the instance runners), enabling another project runner for it,
 * disabling one, and a new registration token for registering its runners. All take Maintainer.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isUniqueViolation } from '../../../db/constraints.ts';
import { deleteRunnerProject, findRunner, insertRunnerProject, runnerProjectIds } from '../../../domain/runners/runners.queries.ts';
import { resetRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { canAdminRunner } from '../../../domain/runners/runner-access.ts';
import { forbidden, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { listRunners, runnerListParams } from '../../loaders/runners.ts';
import { presentRunner, RunnerSchema } from '../../entities/runner.ts';
import { route } from '../../route.ts';

export const RegistrationTokenSchema = Type.Object(
  { token: Type.String(), token_expires_at: Type.Union([Type.String(), Type.Null()]) },
  { title: 'RunnerRegistrationToken' },
);

const listParams = defineParams({ id: P.string(), ...runnerListParams });
const enableParams = defineParams({ id: P.string(), runner_id: P.integer({ description: 'a project runner of another project' }) });
const projectParams = defineParams({ id: P.string() });

const projectRunners: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['runners'];

  async function maintainedProject(request: FastifyRequest, id: string): Promise<ProjectContext> {
    const ctx = await loadProject(request, id);
    // admin_project: Maintainer.
    authorizeProject(ctx, 'update_project');
    return ctx;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/runners', auth: 'required', params: listParams,
    schema: {
      summary: "Runners available to a project: its own, its groups', the instance's", tags,
      response: { 200: Type.Array(RunnerSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await maintainedProject(request, input.id);
    return listRunners(request, reply, input, { projectIds: [ctx.project.id], groupIds: ctx.lineage, instance: true });
  });

  route(app, {
    method: 'POST', url: '/projects/:id/runners', auth: 'required', params: enableParams,
    schema: { summary: 'Enable a project runner for this project too', tags, response: { 201: RunnerSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await maintainedProject(request, input.id);
    const runner = await findRunner(db, input.runner_id);
    if (!runner) throw notFound('Runner');
    if (runner.runner_type === 'instance_type') throw forbidden('Runner is shared');
    if (runner.runner_type === 'group_type') throw forbidden('Runner is a group runner');
    if (runner.locked) throw forbidden('Runner is locked');
    if (!await canAdminRunner(db, caller.user, runner)) throw forbidden('No access granted');
    try {
      await insertRunnerProject(db, runner.id, ctx.project.id);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw validationFailed({ runner_id: ['has already been taken'] });
    }
    return reply.code(201).send(presentRunner(runner));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/runners/:runner_id', auth: 'required', params: enableParams,
    schema: { summary: 'Disable a project runner for this project', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await maintainedProject(request, input.id);
    const runnerId = input.runner_id;
    const projects = await runnerProjectIds(db, runnerId);
    if (!projects.includes(ctx.project.id)) throw notFound('Runner');
    if (projects.length === 1) throw forbidden('Only one project associated with the runner. Please remove the runner instead');
    await deleteRunnerProject(db, runnerId, ctx.project.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/runners/reset_registration_token', auth: 'required', params: projectParams,
    schema: { summary: "A new registration token for the project's runners", tags, response: { 201: RegistrationTokenSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await maintainedProject(request, input.id);
    const token = await resetRegistrationToken(db, await sealerFor(config.dataDir), 'Project', ctx.project.id);
    return reply.code(201).send({ token, token_expires_at: null });
  });
};

export default projectRunners;
