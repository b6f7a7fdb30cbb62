/**
 * Runners for users (CONTRACT §4; spec deprecations; the Service's lib/api/ci/runners.rb, 15.2):
 * GET /runners lists the runners the caller owns (project runners of projects they maintain,
 * group runners of groups they own), GET /runners/all every runner (administrators), and one
 * runner shown, updated, deleted, and its jobs. Lists take `paused` beside the deprecated
 * `active`, contact statuses, and the deprecated status values `active` and `paused` with a
 * Deprecation header (loaders/runners.ts).
 *
 * Instance runners may be looked at by anyone signed in and changed by administrators only
 * ("Runner is shared"); project and group runners by whoever may administer them
 * (domain/runners/runner-access.ts), others get "No access granted".
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { RunnerRow } from '../../../db/tables/ci.ts';
import { deleteRunner, findRunner, runnerJobsQuery, runnerProjectIds, updateRunner } from '../../../domain/runners/runners.queries.ts';
import { normalizeTags, runnerErrors } from '../../../domain/runners/register-runner.ts';
import { canAdminRunner, ownedRunnerScope } from '../../../domain/runners/runner-access.ts';
import { JOB_STATUSES } from '../../../domain/jobs/state-machine.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { forbidden, notFound, validationFailed } from '../../errors.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { listRunners, runnerListParams, runnerOwners } from '../../loaders/runners.ts';
import { loadJobExtras } from '../../loaders/jobs.ts';
import { JobSchema, presentJob } from '../../entities/job.ts';
import { ProjectIdentitySchema, presentProjectIdentity } from '../../entities/project.ts';
import { RunnerDetailsSchema, RunnerSchema, presentRunnerDetails } from '../../entities/runner.ts';
import { ACCESS_LEVELS } from './protocol.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const listParams = defineParams(runnerListParams);
const showParams = defineParams({ id: P.integer() });
const jobsParams = defineParams({
  id: P.integer(),
  status: P.optional(P.oneOf(JOB_STATUSES)),
  order_by: P.optional(P.oneOf(['id'] as const, { default: 'id' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  ...paginationParams,
});
const updateParams = defineParams({
  id: P.integer(),
  description: P.optional(P.string()),
  active: P.optional(P.boolean({ description: 'deprecated: use paused' })),
  paused: P.optional(P.boolean()),
  tag_list: P.optional(P.array(P.string(), { commaSeparated: true })),
  run_untagged: P.optional(P.boolean()),
  locked: P.optional(P.boolean()),
  access_level: P.optional(P.oneOf(ACCESS_LEVELS)),
  maximum_timeout: P.optional(P.integer()),
  maintenance_note: P.optional(P.string()),
}, {
  atLeastOneOf: [
    ['description', 'active', 'paused', 'tag_list', 'run_untagged', 'locked', 'access_level', 'maximum_timeout', 'maintenance_note'],
  ],
  mutuallyExclusive: [['active', 'paused']],
});

/** JobBasicWithProject: a runner's job with the project it belongs to. */
const RunnerJobSchema = Type.Object({ ...JobSchema.properties, project: ProjectIdentitySchema }, { title: 'JobBasicWithProject' });

const runners: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  /** The runner (404), then the caller's right: `change` for writes, looking otherwise. */
  async function loadRunner(caller: Caller, id: number, mode: 'show' | 'change'): Promise<RunnerRow> {
    const runner = await findRunner(db, id);
    if (!runner) throw notFound('Runner');
    const user = caller.user;
    if (runner.runner_type === 'instance_type') {
      if (mode === 'change' && !user.admin) throw forbidden('Runner is shared');
      return runner;
    }
    if (!await canAdminRunner(db, user, runner)) throw forbidden('No access granted');
    return runner;
  }

  const details = async (runner: RunnerRow) => presentRunnerDetails(runner, new Date(), await runnerOwners(db, config.externalUrl, runner));

  route(app, {
    method: 'GET', url: '/runners', auth: 'required', params: listParams,
    schema: {
      summary: "Runners the caller owns (their projects' and groups')", tags: ['runners'],
      response: { 200: Type.Array(RunnerSchema) },
    },
  }, async ({ request, reply, input, caller }) => listRunners(request, reply, input, await ownedRunnerScope(db, caller.user)));

  route(app, {
    method: 'GET', url: '/runners/all', auth: 'required', params: listParams,
    schema: { summary: 'Every runner (administrators)', tags: ['runners'], response: { 200: Type.Array(RunnerSchema) } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    return listRunners(request, reply, input, undefined);
  });

  route(app, {
    method: 'GET', url: '/runners/:id', auth: 'required', params: showParams,
    schema: { summary: 'One runner', tags: ['runners'], response: { 200: RunnerDetailsSchema } },
  }, async ({ input, caller }) => details(await loadRunner(caller, input.id, 'show')));

  route(app, {
    method: 'PUT', url: '/runners/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a runner', tags: ['runners'], response: { 200: RunnerDetailsSchema } },
  }, async ({ input, caller }) => {
    const runner = await loadRunner(caller, input.id, 'change');
    const tagList = input.tag_list ? normalizeTags(input.tag_list) : runner.tag_list === '' ? [] : runner.tag_list.split(' ');
    const runUntagged = typeof input.run_untagged === 'boolean' ? input.run_untagged : runner.run_untagged === 1;
    const maintenanceNote = input.maintenance_note === undefined ? runner.maintenance_note : input.maintenance_note;
    const errors = runnerErrors({ maintenanceNote, tagList, runUntagged, maximumTimeout: input.maximum_timeout });
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const active = typeof input.paused === 'boolean'
      ? !input.paused
      : typeof input.active === 'boolean' ? input.active : runner.active === 1;
    const updated = await updateRunner(db, runner.id, {
      description: input.description ?? runner.description,
      active: active ? 1 : 0,
      tag_list: tagList.join(' '),
      run_untagged: runUntagged ? 1 : 0,
      locked: typeof input.locked === 'boolean' ? (input.locked ? 1 : 0) : runner.locked,
      access_level: input.access_level ?? runner.access_level,
      maximum_timeout: input.maximum_timeout === undefined ? runner.maximum_timeout : input.maximum_timeout,
      maintenance_note: maintenanceNote,
    });
    return details(updated);
  });

  route(app, {
    method: 'DELETE', url: '/runners/:id', auth: 'required', params: showParams,
    schema: { summary: 'Delete a runner', tags: ['runners'], response: { 204: Type.Null() } },
  }, async ({ reply, input, caller }) => {
    const runner = await loadRunner(caller, input.id, 'change');
    // A runner shared by several projects is removed from them one by one (DELETE /projects/:id/runners/:runner_id).
    if (runner.runner_type === 'project_type' && (await runnerProjectIds(db, runner.id)).length > 1) {
      throw forbidden('Runner associated with more than one project');
    }
    await deleteRunner(db, runner.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/runners/:id/jobs', auth: 'required', params: jobsParams,
    schema: { summary: "A runner's jobs, newest first", tags: ['runners'], response: { 200: Type.Array(RunnerJobSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const runner = await findRunner(db, input.id);
    if (!runner) throw notFound('Runner');
    const user = caller.user;
    // Instance runners' jobs are every project's: administrators only.
    if (!user.admin && (runner.runner_type === 'instance_type' || !await canAdminRunner(db, user, runner))) {
      throw forbidden('No access granted');
    }
    const projectIds = user.admin ? undefined : (await ownedRunnerScope(db, user)).projectIds;
    const rows = await paginate(db, request, reply, runnerJobsQuery(db, runner.id, { status: input.status, sort: input.sort, projectIds }));
    const extras = await loadJobExtras(db, config.externalUrl, rows);
    const projects = new Map<number, ReturnType<typeof presentProjectIdentity>>();
    for (const id of new Set(rows.map((j) => j.project_id))) {
      const project = await findProjectById(db, id);
      if (!project) continue;
      const ns = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!;
      projects.set(id, presentProjectIdentity(project, { namespace: ns.namespace, fullPath: ns.fullPath, fullName: ns.fullName }));
    }
    return rows.map((j) => ({ ...presentJob(j, extras), project: projects.get(j.project_id)! }));
  });
};

export default runners;
