/**
 * Deployments of a project (lib/api/deployments.rb, 15.2; issue 31 item 8): the list with the
 * DeploymentsFinder's filters and orders, one deployment, deployments made and moved through the
 * API (for deploys outside kiln's CI; one a job made follows its job and cannot be moved), and the
 * merge requests a deployment shipped. Reporters read; Developers create and update.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { DEPLOYMENT_STATUSES } from '../../../domain/deployments/deployment-sync.ts';
import { API_STATUSES, createApiDeployment, updateApiDeployment } from '../../../domain/deployments/api-deployments.ts';
import {
  DEPLOYMENT_ORDERS, deploymentMergeRequestsQuery, findDeploymentInProject, projectDeploymentsQuery,
} from '../../../domain/deployments/deployments.queries.ts';
import { findEnvironmentById, findEnvironmentByName } from '../../../domain/environments/environments.queries.ts';
import { forbidden, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { contextProjectPath } from '../../loaders/issues.ts';
import { presentDeployments } from '../../loaders/deployments.ts';
import { DeploymentSchema } from '../../entities/environment.ts';
import { MergeRequestBasicSchema, presentMergeRequests } from '../../entities/merge-request.ts';
import { route } from '../../route.ts';

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const deploymentParams = { ...idParam, deployment_id: P.integer() };

const deployments: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'GET', url: '/projects/:id/deployments', auth: 'required',
    params: defineParams({
      ...idParam, ...paginationParams,
      order_by: P.optional(P.oneOf(DEPLOYMENT_ORDERS, { default: 'id' })),
      sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc' })),
      updated_after: P.optional(P.dateTime()),
      updated_before: P.optional(P.dateTime()),
      environment: P.optional(P.name({ description: 'the name of the environment' })),
      status: P.optional(P.oneOf(DEPLOYMENT_STATUSES)),
    }),
    schema: { summary: "A project's deployments", tags: ['deployments'], response: { 200: Type.Array(DeploymentSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_deployment');
    let environmentId: number | undefined;
    if (input.environment !== undefined) {
      // An environment the project does not have has no deployments (an id no row holds).
      environmentId = (await findEnvironmentByName(db, ctx.project.id, input.environment))?.id ?? 0;
    }
    const rows = await paginate(db, request, reply, projectDeploymentsQuery(db, ctx.project.id, {
      environmentId, status: input.status, updatedAfter: input.updated_after, updatedBefore: input.updated_before,
      orderBy: input.order_by, sort: input.sort,
    }));
    return presentDeployments(db, config.externalUrl, ctx, rows);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deployments/:deployment_id', auth: 'required', params: defineParams(deploymentParams),
    schema: { summary: 'A deployment', tags: ['deployments'], response: { 200: DeploymentSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_deployment');
    const deployment = await findDeploymentInProject(db, ctx.project.id, input.deployment_id);
    if (!deployment) throw recordNotFound();
    return (await presentDeployments(db, config.externalUrl, ctx, [deployment]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/deployments', auth: 'required',
    params: defineParams({
      ...idParam,
      environment: P.string({ maxLength: 1024, description: 'the name of the environment (made when missing)' }),
      sha: P.name({ description: 'the commit deployed' }),
      ref: P.name({ description: 'the branch or tag deployed' }),
      tag: P.boolean(),
      status: P.oneOf(API_STATUSES),
    }),
    schema: { summary: 'Records a deployment', tags: ['deployments'], response: { 201: DeploymentSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'create_deployment');
    authorizeProject(ctx, 'create_environment');
    const result = await createApiDeployment(db, ctx.project.id, caller.user.id, input);
    if (!result.ok) throw validationFailed(result.errors.errors);
    return reply.code(201).send((await presentDeployments(db, config.externalUrl, ctx, [result.deployment]))[0]);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/deployments/:deployment_id', auth: 'required',
    params: defineParams({ ...deploymentParams, status: P.oneOf(API_STATUSES) }),
    schema: { summary: 'Moves a deployment made through the API', tags: ['deployments'], response: { 200: DeploymentSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_deployment');
    const deployment = await findDeploymentInProject(db, ctx.project.id, input.deployment_id);
    if (!deployment) throw recordNotFound();
    authorizeProject(ctx, 'update_deployment');
    if (deployment.deployable_id !== null) throw forbidden('Deployments created using kiln CI can not be updated using the API');
    const environment = (await findEnvironmentById(db, deployment.environment_id))!;
    const result = await updateApiDeployment(db, deployment, environment, input.status);
    if (!result.ok) throw validationFailed(result.errors.errors);
    return (await presentDeployments(db, config.externalUrl, ctx, [result.deployment]))[0];
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deployments/:deployment_id/merge_requests', auth: 'required',
    params: defineParams({
      ...deploymentParams, ...paginationParams,
      order_by: P.optional(P.oneOf(['created_at', 'updated_at'] as const, { default: 'created_at' })),
      sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
    }),
    schema: {
      summary: 'The merge requests a deployment shipped', tags: ['deployments'],
      response: { 200: Type.Array(MergeRequestBasicSchema) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_deployment');
    const deployment = await findDeploymentInProject(db, ctx.project.id, input.deployment_id);
    if (!deployment) throw recordNotFound();
    const rows = await paginate(db, request, reply, deploymentMergeRequestsQuery(db, deployment.id, input.order_by, input.sort));
    return presentMergeRequests(db, rows, {
      externalUrl: config.externalUrl, projects: contextProjectPath(ctx), viewerId: caller.user.id, from: { project: ctx.project.id },
    });
  });
};

export default deployments;
