/**
 * What every resolver receives: the kiln context, the caller as REST authentication set it, and
 * this request's batch loaders (one query per level of a list, whatever its length).
 */
import DataLoader from 'dataloader';
import type { FastifyRequest } from 'fastify';
import type { Caller, KilnContext } from '../http/context.ts';
import type { UserRow } from '../db/types.ts';
import type { ProjectRow } from '../db/tables/projects.ts';
import type { BuildRow, JobArtifactRow, PipelineRow, RunnerRow } from '../db/tables/ci.ts';
import type { EmailRow } from '../db/tables/emails.ts';
import type { UserStatusRow } from '../db/tables/user-status.ts';
import type { MemberRow } from '../db/tables/projects.ts';
import type { Actor } from '../domain/permissions/access.ts';
import { currentStatusesOf, emailsOfUsers, findUsersByIds, membershipsOfUsers } from '../domain/users/users-batch.queries.ts';
import { personalNamespaceIds } from '../domain/users/users.queries.ts';
import { findProjectsByIds } from '../domain/projects/projects-batch.queries.ts';
import { namespacePathsById, type NamespacePaths } from '../domain/namespaces/namespaces.queries.ts';
import type { NamespaceRow } from '../db/types.ts';
import { findPipelinesByIds } from '../domain/pipelines/pipelines.queries.ts';
import { findJobsByIds, jobsOfPipelines } from '../domain/jobs/jobs-batch.queries.ts';
import { jobArtifacts } from '../domain/jobs/jobs.queries.ts';
import { findRunnersByIds } from '../domain/runners/runners.queries.ts';
import { groupActor, projectActor } from '../domain/permissions/actors.ts';
import { nowIso } from '../domain/clock.ts';

export type NamespaceInfo = NamespacePaths & { namespace: NamespaceRow };

export interface GqlContext {
  kiln: KilnContext;
  request: FastifyRequest;
  caller: Caller | null;
  viewer: UserRow | null;
  /** Complexity of the running query and the caller's limit (the `queryComplexity` field). */
  complexity: { limit: number; score: number };
  loaders: Loaders;
}

function byKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): (V | null)[] {
  const map = new Map<K, V>();
  for (const r of rows) map.set(keyOf(r), r);
  return keys.map((k) => map.get(k) ?? null);
}

function groupBy<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const map = new Map<K, V[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = map.get(k);
    if (list) list.push(r);
    else map.set(k, [r]);
  }
  return keys.map((k) => map.get(k) ?? []);
}

function buildLoaders(kiln: KilnContext, viewer: UserRow | null) {
  const db = kiln.db;
  const namespaces = new DataLoader<number, NamespaceInfo | null>(async (ids) => {
    const found = await namespacePathsById(db, [...ids]);
    return ids.map((id) => found.get(id) ?? null);
  });
  const projects = new DataLoader<number, ProjectRow | null>(async (ids) => byKey(ids, await findProjectsByIds(db, ids), (p) => p.id));
  return {
    users: new DataLoader<number, UserRow | null>(async (ids) => byKey(ids, await findUsersByIds(db, ids), (u) => u.id)),
    projects,
    namespaces,
    personalNamespaceIds: new DataLoader<number, number | null>(async (userIds) => {
      const found = await personalNamespaceIds(db, [...userIds]);
      return userIds.map((id) => found.get(id) ?? null);
    }),
    pipelines: new DataLoader<number, PipelineRow | null>(async (ids) => {
      const found = await findPipelinesByIds(db, [...ids]);
      return ids.map((id) => found.get(id) ?? null);
    }),
    jobs: new DataLoader<number, BuildRow | null>(async (ids) => byKey(ids, await findJobsByIds(db, ids), (j) => j.id)),
    /** The latest try of each job of a pipeline (what lists show unless `retried` is asked for). */
    latestJobs: new DataLoader<number, BuildRow[]>(
      async (ids) => groupBy(ids, await jobsOfPipelines(db, ids, { includeRetried: false }), (j) => j.pipeline_id),
    ),
    allJobs: new DataLoader<number, BuildRow[]>(
      async (ids) => groupBy(ids, await jobsOfPipelines(db, ids, { includeRetried: true }), (j) => j.pipeline_id),
    ),
    artifacts: new DataLoader<number, JobArtifactRow[]>(async (ids) => groupBy(ids, await jobArtifacts(db, [...ids]), (a) => a.job_id)),
    runners: new DataLoader<number, RunnerRow | null>(async (ids) => {
      const found = await findRunnersByIds(db, [...ids]);
      return ids.map((id) => found.get(id) ?? null);
    }),
    emails: new DataLoader<number, EmailRow[]>(async (ids) => groupBy(ids, await emailsOfUsers(db, ids), (e) => e.user_id)),
    statuses: new DataLoader<number, UserStatusRow | null>(
      async (ids) => byKey(ids, await currentStatusesOf(db, ids, nowIso()), (s) => s.user_id),
    ),
    groupMemberships: new DataLoader<number, MemberRow[]>(
      async (ids) => groupBy(ids, await membershipsOfUsers(db, ids, 'Namespace'), (m) => m.user_id),
    ),
    projectMemberships: new DataLoader<number, MemberRow[]>(
      async (ids) => groupBy(ids, await membershipsOfUsers(db, ids, 'Project'), (m) => m.user_id),
    ),
    /**
     * The viewer's standing on a project, for the policy table (domain/permissions): the same
     * rules as REST, asked once per project per request.
     */
    projectActors: new DataLoader<number, Actor>(async (projectIds) => Promise.all(projectIds.map(async (id) => {
      const project = await projects.load(id);
      const ns = project ? await namespaces.load(project.namespace_id) : null;
      return projectActor(db, viewer, id, ns?.lineage ?? []);
    }))),
    /** The viewer's standing on a group (inherited down its lineage), once per group per request. */
    groupActors: new DataLoader<number, Actor>(async (groupIds) => Promise.all(groupIds.map(async (id) => {
      const ns = await namespaces.load(id);
      return groupActor(db, viewer, ns?.lineage ?? [id]);
    }))),
  };
}

export type Loaders = ReturnType<typeof buildLoaders>;

/**
 * The loaders, made on first use: most requests (`currentUser { username }`) need none, and
 * fifteen DataLoaders per request would be work for nothing on the hottest path.
 */
export function createLoaders(kiln: KilnContext, viewer: UserRow | null): Loaders {
  let made: Loaders | null = null;
  const get = () => (made ??= buildLoaders(kiln, viewer));
  return new Proxy({} as Loaders, { get: (_t, name) => get()[name as keyof Loaders] });
}
