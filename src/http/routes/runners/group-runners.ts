/**
 * A group's runners (the Service's lib/api/ci/runners.rb, 15.2; spec, Deprecations: GET
 * /groups/:id/runners): the group runners of the group and its subgroups, and a new registration
 * token for registering them. `type=project_type` (and `instance_type`) answer the empty list, as
 * 15.2 does (the deprecation table: "always returned empty"). Both take the group's Owner.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { descendantGroupIds } from '../../../domain/namespaces/namespaces.queries.ts';
import { resetRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeGroup, loadGroup, type GroupContext } from '../../loaders/containers.ts';
import { listRunners, runnerListParams } from '../../loaders/runners.ts';
import { RunnerSchema } from '../../entities/runner.ts';
import { RegistrationTokenSchema } from './project-runners.ts';
import { route } from '../../route.ts';

const listParams = defineParams({ id: P.string(), ...runnerListParams });
const groupParams = defineParams({ id: P.string() });

const groupRunners: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['runners'];

  async function ownedGroup(request: FastifyRequest, id: string): Promise<GroupContext> {
    const ctx = await loadGroup(request, id);
    authorizeGroup(ctx, 'admin_group');
    return ctx;
  }

  route(app, {
    method: 'GET', url: '/groups/:id/runners', auth: 'required', params: listParams,
    schema: { summary: 'Group runners of a group and its subgroups', tags, response: { 200: Type.Array(RunnerSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await ownedGroup(request, input.id);
    const groupIds = [ctx.group.id, ...(await descendantGroupIds(db, [ctx.group.id])).keys()];
    return listRunners(request, reply, input, { projectIds: [], groupIds, instance: false });
  });

  route(app, {
    method: 'POST', url: '/groups/:id/runners/reset_registration_token', auth: 'required', params: groupParams,
    schema: { summary: "A new registration token for the group's runners", tags, response: { 201: RegistrationTokenSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await ownedGroup(request, input.id);
    const token = await resetRegistrationToken(db, await sealerFor(config.dataDir), 'Namespace', ctx.group.id);
    return reply.code(201).send({ token, token_expires_at: null });
  });
};

export default groupRunners;
