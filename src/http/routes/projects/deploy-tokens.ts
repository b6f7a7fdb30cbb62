/**
 * Deploy tokens (the Service's lib/api/deploy_tokens.rb): the instance's tokens for
 * administrators, a project's for its Maintainers (ProjectPolicy admin_project: read, create and
 * destroy_deploy_token), a group's for its Maintainers to read and its Owners to create and delete
 * (GroupPolicy: read_deploy_token at maintainer, create/destroy_deploy_token at owner). The secret
 * is shown only in the answer to the creation; DELETE destroys the token
 * (DeployTokenMethods#destroy_deploy_token). A token authenticates git over HTTP
 * (src/git/git-credentials.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { createDeployToken, DEPLOY_TOKEN_SCOPES } from '../../../domain/deploy-tokens/deploy-tokens.ts';
import { deleteDeployToken, deployTokensQuery, findHeldDeployToken } from '../../../domain/deploy-tokens/deploy-tokens.queries.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { badRequestMessage, recordNotFound } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import {
  DeployTokenSchema, DeployTokenWithTokenSchema, presentDeployToken, presentDeployTokenWithToken,
} from '../../entities/deploy-token.ts';
import { route } from '../../route.ts';

/** Long enough for the model's own "is too long (maximum is 255 characters)" to answer. */
const TEXT_LIMIT = 1024;

const active = P.optional(P.boolean({ description: 'only tokens neither revoked nor expired' }));
const projectId = P.string({ description: 'project id or path' });
const groupId = P.string({ description: 'group id or path' });
const tokenId = P.integer({ description: 'deploy token id' });
const createFields = {
  name: P.string({ maxLength: TEXT_LIMIT, description: 'name of the token' }),
  scopes: P.array(P.oneOf(DEPLOY_TOKEN_SCOPES), {
    commaSeparated: true, description: 'read_repository, read_registry, write_registry, read_package_registry, write_package_registry',
  }),
  expires_at: P.optional(P.dateTime({ description: 'expiry, ISO 8601; none: never' })),
  username: P.optional(P.string({ maxLength: TEXT_LIMIT, description: 'username; default gitlab+deploy-token-<id>' })),
};

const params = {
  all: defineParams({ ...paginationParams, active }),
  projectList: defineParams({ id: projectId, ...paginationParams, active }),
  projectOne: defineParams({ id: projectId, token_id: tokenId }),
  projectCreate: defineParams({ id: projectId, ...createFields }),
  groupList: defineParams({ id: groupId, ...paginationParams, active }),
  groupOne: defineParams({ id: groupId, token_id: tokenId }),
  groupCreate: defineParams({ id: groupId, ...createFields }),
};

const tags = ['deploy_tokens'];

const deployTokens: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const now = () => new Date().toISOString();

  route(app, {
    method: 'GET', url: '/deploy_tokens', auth: 'required', params: params.all,
    schema: { summary: "The instance's deploy tokens (administrators)", tags, response: { 200: Type.Array(DeployTokenSchema) } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const rows = await paginate(db, request, reply, deployTokensQuery(db, { active: input.active }, now()));
    return rows.map(presentDeployToken);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deploy_tokens', auth: 'required', params: params.projectList,
    schema: { summary: "A project's deploy tokens", tags, response: { 200: Type.Array(DeployTokenSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const rows = await paginate(db, request, reply, deployTokensQuery(db, { projectId: ctx.project.id, active: input.active }, now()));
    return rows.map(presentDeployToken);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deploy_tokens/:token_id', auth: 'required', params: params.projectOne,
    schema: { summary: "One of a project's deploy tokens", tags, response: { 200: DeployTokenSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const row = await findHeldDeployToken(db, { projectId: ctx.project.id }, input.token_id);
    if (!row) throw recordNotFound();
    return presentDeployToken(row);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/deploy_tokens', auth: 'required', params: params.projectCreate,
    schema: {
      summary: 'Creates a project deploy token (its secret is shown only here)', tags, response: { 201: DeployTokenWithTokenSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const result = await createDeployToken(db, await sealerFor(config.dataDir), {
      name: input.name, scopes: input.scopes ?? [], expiresAt: input.expires_at ?? null, username: input.username ?? null,
      holder: { projectId: ctx.project.id }, creatorId: caller.user.id,
    });
    if (!result.ok) throw badRequestMessage(sentence(result.messages));
    return reply.code(201).send(presentDeployTokenWithToken(result.row, result.token));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/deploy_tokens/:token_id', auth: 'required', params: params.projectOne,
    schema: { summary: 'Deletes a project deploy token', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const row = await findHeldDeployToken(db, { projectId: ctx.project.id }, input.token_id);
    if (!row) throw recordNotFound();
    await deleteDeployToken(db, row.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/groups/:id/deploy_tokens', auth: 'required', params: params.groupList,
    schema: { summary: "A group's deploy tokens", tags, response: { 200: Type.Array(DeployTokenSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'read_deploy_token');
    const rows = await paginate(db, request, reply, deployTokensQuery(db, { groupId: ctx.group.id, active: input.active }, now()));
    return rows.map(presentDeployToken);
  });

  route(app, {
    method: 'GET', url: '/groups/:id/deploy_tokens/:token_id', auth: 'required', params: params.groupOne,
    schema: { summary: "One of a group's deploy tokens", tags, response: { 200: DeployTokenSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'read_deploy_token');
    const row = await findHeldDeployToken(db, { groupId: ctx.group.id }, input.token_id);
    if (!row) throw recordNotFound();
    return presentDeployToken(row);
  });

  route(app, {
    method: 'POST', url: '/groups/:id/deploy_tokens', auth: 'required', params: params.groupCreate,
    schema: {
      summary: 'Creates a group deploy token (its secret is shown only here)', tags, response: { 201: DeployTokenWithTokenSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    const result = await createDeployToken(db, await sealerFor(config.dataDir), {
      name: input.name, scopes: input.scopes ?? [], expiresAt: input.expires_at ?? null, username: input.username ?? null,
      holder: { groupId: ctx.group.id }, creatorId: caller.user.id,
    });
    if (!result.ok) throw badRequestMessage(sentence(result.messages));
    return reply.code(201).send(presentDeployTokenWithToken(result.row, result.token));
  });

  route(app, {
    method: 'DELETE', url: '/groups/:id/deploy_tokens/:token_id', auth: 'required', params: params.groupOne,
    schema: { summary: 'Deletes a group deploy token', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    const row = await findHeldDeployToken(db, { groupId: ctx.group.id }, input.token_id);
    if (!row) throw recordNotFound();
    await deleteDeployToken(db, row.id);
    return reply.code(204).send();
  });
};

/** `errors.full_messages.to_sentence`. */
function sentence(messages: string[]): string {
  if (messages.length <= 2) return messages.join(' and ');
  return `${messages.slice(0, -1).join(', ')}, and ${messages[messages.length - 1]}`;
}

export default deployTokens;
