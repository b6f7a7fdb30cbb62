/**
 * Runners for users (CONTRACT §4; spec deprecations): lists with `paused` and the deprecated
 * `active`, status filters by contact status (online, offline, stale, never_contacted and the
 * older not_connected) while the removed status values `active` and `paused` are refused (use
 * paused=true|false), one runner, and updating one.
 *
 * kiln registers instance runners only (the instance registration token, CONTRACT §2). They run
 * every project's jobs, so GET /runners lists them to every signed-in user, and GET /runners/:id
 * shows one to anyone signed in, as the Service shows instance runners; changing one takes an
 * administrator ("Runner is shared").
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findRunner, runnersQuery, updateRunner } from '../../domain/runners/runners.queries.ts';
import { normalizeTags, runnerErrors } from '../../domain/runners/register-runner.ts';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { authenticatedAsAdmin } from '../auth/admin.ts';
import { defineParams, P } from '../params.ts';
import { paginate, paginationParams } from '../pagination.ts';
import { RunnerDetailsSchema, RunnerSchema, presentRunner, presentRunnerDetails } from '../entities/runner.ts';
import { ACCESS_LEVELS } from './runner-protocol.ts';

const STATUSES = ['online', 'offline', 'stale', 'never_contacted', 'not_connected'] as const;
const TYPES = ['instance_type', 'group_type', 'project_type'] as const;

const listParams = defineParams({
  scope: P.optional(P.oneOf(STATUSES, { description: 'deprecated: use type or status' })),
  type: P.optional(P.oneOf(TYPES)),
  paused: P.optional(P.boolean()),
  status: P.optional(P.oneOf(STATUSES)),
  tag_list: P.optional(P.array(P.string(), { commaSeparated: true })),
  ...paginationParams,
});
const showParams = defineParams({ id: P.integer() });
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
  atLeastOneOf: [['description', 'active', 'paused', 'tag_list', 'run_untagged', 'locked', 'access_level', 'maximum_timeout', 'maintenance_note']],
  mutuallyExclusive: [['active', 'paused']],
});

const runners: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  const list = async (request: FastifyRequest, reply: Parameters<typeof paginate>[2]) => {
    const input = request.input as { scope?: string; type?: string; paused?: boolean | null; status?: string; tag_list?: string[] };
    const rows = await paginate(db, request, reply, runnersQuery(db, {
      type: input.type, paused: input.paused ?? undefined, status: input.status ?? input.scope, tagList: input.tag_list, now: new Date(),
    }));
    const now = new Date();
    return rows.map((r) => presentRunner(r, now));
  };

  app.get('/runners', {
    config: { auth: 'required', params: listParams },
    schema: { summary: 'Runners available to the caller', tags: ['runners'], response: { 200: Type.Array(RunnerSchema) } },
  }, list);

  app.get('/runners/all', {
    config: { auth: 'required', params: listParams },
    schema: { summary: 'Every runner (administrators)', tags: ['runners'], response: { 200: Type.Array(RunnerSchema) } },
  }, async (request, reply) => {
    authenticatedAsAdmin(request);
    return list(request, reply);
  });

  app.get('/runners/:id', {
    config: { auth: 'required', params: showParams },
    schema: { summary: 'One runner', tags: ['runners'], response: { 200: RunnerDetailsSchema } },
  }, async (request) => {
    const runner = await findRunner(db, (request.input as { id: number }).id);
    if (!runner) throw notFound('Runner');
    return presentRunnerDetails(runner);
  });

  app.put('/runners/:id', {
    config: { auth: 'required', params: updateParams },
    schema: { summary: 'Update a runner', tags: ['runners'], response: { 200: RunnerDetailsSchema } },
  }, async (request) => {
    const input = request.input as Record<string, any>;
    const runner = await findRunner(db, input.id);
    if (!runner) throw notFound('Runner');
    if (!request.caller!.user.admin && runner.runner_type === 'instance_type') throw forbidden('Runner is shared');
    const tagList = input.tag_list ? normalizeTags(input.tag_list) : runner.tag_list === '' ? [] : runner.tag_list.split(' ');
    const runUntagged = typeof input.run_untagged === 'boolean' ? input.run_untagged : runner.run_untagged === 1;
    const maintenanceNote = input.maintenance_note === undefined ? runner.maintenance_note : input.maintenance_note;
    const errors = runnerErrors({ maintenanceNote, tagList, runUntagged, maximumTimeout: input.maximum_timeout });
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const active = typeof input.paused === 'boolean' ? !input.paused : typeof input.active === 'boolean' ? input.active : runner.active === 1;
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
    return presentRunnerDetails(updated);
  });
};

export default runners;
