/**
 * What the runner lists share (GET /runners, /runners/all, /projects/:id/runners,
 * /groups/:id/runners): their filters, including the status values `active` and `paused` that
 * 15.2 still accepts though their removal is planned for 16.0 (spec, Deprecations) — answered
 * with a `Deprecation` header (RFC 9745, dated from the announcement in 15.0) — and the
 * presentation of a page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { runnerProjectIds, runnersQuery, type RunnerScope } from '../../domain/runners/runners.queries.ts';
import { findProjectById } from '../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { P } from '../input/params.ts';
import { invalidParams } from '../errors.ts';
import { paginate, paginationParams } from '../lists/pagination.ts';
import { presentRunner, type RunnerOwners } from '../entities/runner.ts';

export const RUNNER_STATUSES = ['active', 'paused', 'online', 'offline', 'stale', 'never_contacted', 'not_connected'] as const;
export const RUNNER_TYPES = ['instance_type', 'group_type', 'project_type'] as const;
const DEPRECATED_STATUSES = new Set(['active', 'paused']);
/** 2022-05-22, the 15.0 release that announced the removal. */
const DEPRECATED_SINCE = '@1653177600';

export const runnerListParams = {
  scope: P.optional(P.oneOf(RUNNER_STATUSES, { description: 'deprecated: use type or status' })),
  type: P.optional(P.oneOf(RUNNER_TYPES)),
  paused: P.optional(P.boolean()),
  status: P.optional(P.oneOf(RUNNER_STATUSES, { description: 'active and paused are deprecated: use paused=false|true' })),
  tag_list: P.optional(P.array(P.string(), { commaSeparated: true })),
  ...paginationParams,
};

/** The filters of runnerListParams, as validated (`paused` is null when sent empty). */
export type RunnerListInput = {
  scope?: (typeof RUNNER_STATUSES)[number]; type?: (typeof RUNNER_TYPES)[number]; paused?: boolean | null;
  status?: (typeof RUNNER_STATUSES)[number]; tag_list?: string[];
};

export async function listRunners(request: FastifyRequest, reply: FastifyReply, input: RunnerListInput, scope: RunnerScope | undefined) {
  const { db } = request.server.kiln;
  const status = input.status ?? input.scope;
  // No tag holds a NUL byte; PostgreSQL would refuse one in the query.
  if (input.tag_list?.some((tag) => tag.includes('\0') || tag.length > 1024)) throw invalidParams(['tag_list is invalid']);
  if (status !== undefined && DEPRECATED_STATUSES.has(status)) reply.header('deprecation', DEPRECATED_SINCE);
  const now = new Date();
  const rows = await paginate(db, request, reply, runnersQuery(db, {
    scope, type: input.type, paused: input.paused ?? undefined, status, tagList: input.tag_list, now,
  }));
  return rows.map((r) => presentRunner(r, now));
}

/** The projects of a project runner or the group of a group runner, for RunnerDetails. */
export async function runnerOwners(db: Kysely<DB>, externalUrl: string, runner: RunnerRow): Promise<RunnerOwners> {
  if (runner.runner_type === 'group_type' && runner.group_id !== null) {
    const group = (await namespacePathsById(db, [runner.group_id])).get(runner.group_id);
    return {
      projects: [],
      groups: group ? [{ id: group.namespace.id, web_url: `${externalUrl}/groups/${group.fullPath}`, name: group.namespace.name }] : [],
    };
  }
  if (runner.runner_type !== 'project_type') return { projects: [], groups: [] };
  const projects = (await Promise.all(
    (await runnerProjectIds(db, runner.id)).map((id) => findProjectById(db, id)),
  )).filter((p) => p !== undefined);
  const paths = await namespacePathsById(db, projects.map((p) => p.namespace_id));
  return {
    groups: [],
    projects: projects.map((p) => {
      const ns = paths.get(p.namespace_id)!;
      return {
        id: p.id, name: p.name, name_with_namespace: `${ns.fullName} / ${p.name}`, path: p.path,
        path_with_namespace: `${ns.fullPath}/${p.path}`,
      };
    }),
  };
}
