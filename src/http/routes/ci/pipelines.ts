/**
 * Pipelines of a project (CONTRACT §4): create one from the `.gitlab-ci.yml` at a ref, list them,
 * show one. Reading takes read_build (Reporter, or anyone on a public project); creating takes
 * Developer, as the Service's create_pipeline does.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { compileSerializer, exactJson } from '../../entities/serializers.ts';
import { RememberedPages } from '../../lists/remembered-pages.ts';
import { createPipeline } from '../../../domain/pipelines/create-pipeline.ts';
import { checkPipelineVariables } from '../../../domain/ci-variables/pipeline-variables.ts';
import { resolvePipelineVariables } from '../../../domain/ci-variables/collect-variables.ts';
import { VARIABLE_TYPES } from '../../../domain/ci-variables/variable-rules.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import {
  findPipelineInProject, latestJobCoverages, projectPipelinesShape, type ProjectPipelinesFrom,
} from '../../../domain/pipelines/pipelines.queries.ts';
import { pipelineCoverage } from '../../../domain/pipelines/pipeline-timing.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginationParams, ShapedList } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import {
  PIPELINE_BASIC_COLUMNS, PipelineBasicSchema, PipelineSchema, presentPipeline, presentPipelineBasic,
} from '../../entities/pipeline.ts';
import { route } from '../../route.ts';

export const PIPELINE_STATUSES = [
  'created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'success', 'failed', 'canceled',
  'skipped', 'manual', 'scheduled',
] as const;

const createParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  // A ref is at most 255 characters; its form is checked as git does before git sees it.
  ref: P.name({ description: 'branch or tag to run the pipeline for' }),
  variables: P.optional(P.array(P.object({
    key: P.optional(P.string()), value: P.optional(P.string()), variable_type: P.optional(P.oneOf(VARIABLE_TYPES, { default: 'env_var' })),
  }), { description: 'variables of this pipeline: [{key, value, variable_type}]' })),
});
const listParams = defineParams({
  id: P.string(),
  scope: P.optional(P.oneOf(['running', 'pending', 'finished', 'branches', 'tags'] as const)),
  status: P.optional(P.oneOf(PIPELINE_STATUSES)),
  ref: P.optional(P.name()),
  sha: P.optional(P.name()),
  source: P.optional(P.string()),
  order_by: P.optional(P.oneOf(['id', 'status', 'ref', 'updated_at', 'user_id'] as const, { default: 'id' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  ...paginationParams,
});
const showParams = defineParams({ id: P.string(), pipeline_id: P.integer() });

export function projectWebUrl(externalUrl: string, ctx: ProjectContext): string {
  return `${externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`;
}

/** A project's pipelines: PipelineBasic's columns only. */
const projectPipelinesList = new ShapedList('project-pipelines', {
  from: (db) => db.selectFrom('ci_pipelines'),
  select: (qb: ProjectPipelinesFrom) => qb.select(PIPELINE_BASIC_COLUMNS),
  id: 'ci_pipelines.id',
});

const PipelineList = exactJson(Type.Array(PipelineBasicSchema));
const serializePipelineList = compileSerializer(PipelineList);

const pipelines: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const projectPipelinesPages = new RememberedPages('project-pipelines');

  route(app, {
    method: 'POST', url: '/projects/:id/pipeline', auth: 'required', params: createParams,
    schema: { summary: 'Create a pipeline from the CI configuration at a ref', tags: ['pipelines'], response: { 201: PipelineSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'update_build');
    const user = caller.user;
    // Variables given with the request (issue 20): checked, resolved with the owners', stored with the pipeline.
    const given = checkPipelineVariables(
      (input.variables ?? []).map((v) => ({ key: v.key ?? '', value: v.value ?? '', variable_type: v.variable_type })),
    );
    if (!given.ok) throw validationFailed({ base: given.errors });
    const variables = await resolvePipelineVariables(db, config.dataDir, ctx.project, input.ref, given.variables);
    const result = await createPipeline(ciEnvFrom(db, config), {
      project: ctx.project, ref: input.ref, userId: user.id, source: 'api', variables, pipelineVariables: given.variables,
    });
    // The Service answers a pipeline that could not be created with its base errors.
    if (!result.ok) throw validationFailed({ base: [result.error] });
    const fresh = (await findPipelineInProject(db, ctx.project.id, result.pipeline.id))!;
    return reply.code(201).send(presentPipeline(fresh, projectWebUrl(config.externalUrl, ctx), user, config.externalUrl));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines', auth: 'optional', params: listParams,
    schema: { summary: "A project's pipelines", tags: ['pipelines'], response: { 200: PipelineList } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const remembered = projectPipelinesPages.answer(request, reply);
    if (remembered !== undefined) return remembered;
    const rows = await projectPipelinesList.paginate(db, request, reply, projectPipelinesShape(ctx.project.id, {
      status: input.status, ref: input.ref, sha: input.sha, source: input.source, scope: input.scope,
      orderBy: input.order_by, sort: input.sort,
    }));
    const webUrl = projectWebUrl(config.externalUrl, ctx);
    return projectPipelinesPages.send(request, reply, rows.map((p) => presentPipelineBasic(p, webUrl)), serializePipelineList);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines/:pipeline_id', auth: 'optional', params: showParams,
    schema: { summary: 'A single pipeline', tags: ['pipelines'], response: { 200: PipelineSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const pipeline = await findPipelineInProject(db, ctx.project.id, input.pipeline_id);
    if (!pipeline) throw recordNotFound();
    const user = pipeline.user_id === null ? null : await findUserById(db, pipeline.user_id) ?? null;
    const coverage = pipelineCoverage(await latestJobCoverages(db, pipeline.id));
    return presentPipeline(pipeline, projectWebUrl(config.externalUrl, ctx), user, config.externalUrl, coverage);
  });
};

export default pipelines;
