/**
 * The Service's `Pipeline` and `CiJob` types (project-ci.ts finds them under a project). A page
 * of pipelines loads its jobs, users, runners and artifacts in one query each (context.ts).
 */
import { GraphQLError } from 'graphql';
import path from 'node:path';
import fs from 'node:fs/promises';
import type { BuildRow, JobArtifactRow, PipelineRow } from '../../db/tables/ci.ts';
import { isRetryable, transition } from '../../domain/jobs/state-machine.ts';
import { traceRelPath } from '../../domain/jobs/job-files.ts';
import { hasCancelableJobs } from '../../domain/pipelines/pipeline-actions.ts';
import { pipelineQueuedDuration } from '../../domain/pipelines/pipeline-timing.ts';
import { escapeHtml } from '../../web/html.ts';
import { optionalText } from '../bounds.ts';
import { MODELS, toGid, type ParsedGid } from '../global-id.ts';
import { connectionFromArray, type ConnectionArgs } from '../connection.ts';
import { projectById } from '../access.ts';
import type { GqlContext } from '../context.ts';

export const typeDefs = /* GraphQL */ `
  enum PipelineStatusEnum { CREATED WAITING_FOR_RESOURCE PREPARING PENDING RUNNING FAILED SUCCESS CANCELED SKIPPED MANUAL SCHEDULED }
  enum PipelineScopeEnum { RUNNING PENDING FINISHED BRANCHES TAGS }
  enum CiJobStatus { CREATED WAITING_FOR_RESOURCE PREPARING PENDING RUNNING SUCCESS FAILED CANCELED SKIPPED MANUAL SCHEDULED }
  enum CiJobKind { BUILD BRIDGE }
  enum ShaFormat { SHORT LONG }
  enum JobArtifactFileType { ARCHIVE METADATA TRACE JUNIT }

  type Pipeline {
    id: ID!
    iid: String!
    sha(format: ShaFormat): String
    beforeSha: String
    ref: String
    refPath: String
    status: PipelineStatusEnum!
    source: String
    active: Boolean!
    cancelable: Boolean!
    retryable: Boolean!
    complete: Boolean!
    duration: Int
    queuedDuration: Duration
    createdAt: Time!
    updatedAt: Time!
    startedAt: Time
    finishedAt: Time
    committedAt: Time
    user: UserCore
    project: Project
    path: String
    jobs(statuses: [CiJobStatus!], retried: Boolean, after: String, before: String, first: Int, last: Int): CiJobConnection
    job(id: JobID, name: String): CiJob
    stages(after: String, before: String, first: Int, last: Int): CiStageConnection
    downstream(after: String, before: String, first: Int, last: Int): PipelineConnection
    upstream: Pipeline
  }
  type PipelineEdge { cursor: String! node: Pipeline }
  type PipelineConnection { edges: [PipelineEdge] nodes: [Pipeline] pageInfo: PageInfo! count: Int! }

  type CiStage {
    name: String
    status: String
  }
  type CiStageEdge { cursor: String! node: CiStage }
  type CiStageConnection { edges: [CiStageEdge] nodes: [CiStage] pageInfo: PageInfo! }

  type CiJobArtifact {
    downloadPath: String
    fileType: JobArtifactFileType
  }
  type CiJobArtifactEdge { cursor: String! node: CiJobArtifact }
  type CiJobArtifactConnection { edges: [CiJobArtifactEdge] nodes: [CiJobArtifact] pageInfo: PageInfo! }

  type CiJobTrace {
    "HTML summary of the last lines of the log."
    htmlSummary(lastLines: Int = 10): String!
  }

  type CiJob {
    id: JobID
    name: String
    status: CiJobStatus
    kind: CiJobKind!
    stage: CiStage
    duration: Int
    queuedDuration: Duration
    active: Boolean!
    allowFailure: Boolean!
    cancelable: Boolean!
    retryable: Boolean!
    playable: Boolean!
    manualJob: Boolean
    retried: Boolean
    scheduled: Boolean!
    triggered: Boolean
    createdByTag: Boolean!
    tags: [String!]
    refName: String
    refPath: String
    shortSha: String!
    webPath: String
    playPath: String
    retryPath: String
    cancelPath: String
    createdAt: Time!
    queuedAt: Time
    startedAt: Time
    finishedAt: Time
    erasedAt: Time
    pipeline: Pipeline
    project: Project
    runner: CiRunner
    downstreamPipeline: Pipeline
    artifacts(after: String, before: String, first: Int, last: Int): CiJobArtifactConnection
    trace: CiJobTrace
  }
  type CiJobEdge { cursor: String! node: CiJob }
  type CiJobConnection { edges: [CiJobEdge] nodes: [CiJob] pageInfo: PageInfo! count: Int! }

`;

const ACTIVE = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled'];
const COMPLETE = ['success', 'failed', 'canceled', 'skipped'];
/** Longest ref, sha or source kiln compares (git's own ref names stay well below). */
const MAX_FILTER = 1024;
/** The Service's cap on a log summary's lines (Ci::BuildTrace: at most 100). */
const MAX_SUMMARY_LINES = 100;

function seconds(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  return (Date.parse(to) - Date.parse(from)) / 1000;
}

export function filterText(value: string | null | undefined, name: string): string | undefined {
  return optionalText(value, name, MAX_FILTER);
}

/** `/<namespace path>/<project path>` of a project, from the request's loaders. */
export async function projectPath(ctx: GqlContext, projectId: number): Promise<string | null> {
  const project = await ctx.loaders.projects.load(projectId);
  const ns = project ? await ctx.loaders.namespaces.load(project.namespace_id) : null;
  return project && ns ? `/${ns.fullPath}/${project.path}` : null;
}

function commit(p: PipelineRow): { committed_date?: string } {
  try {
    return JSON.parse(p.commit_data) as { committed_date?: string };
  } catch {
    return {};
  }
}

/** The pipeline another project's job points at, if the caller may read its builds. */
async function readablePipeline(ctx: GqlContext, id: number | null): Promise<PipelineRow | null> {
  if (id === null) return null;
  const p = await ctx.loaders.pipelines.load(id);
  if (!p) return null;
  return await projectById(ctx, p.project_id, 'read_build') ? p : null;
}

export const jobStatuses = (statuses: string[] | null | undefined) => statuses?.map((s) => s.toLowerCase());

const pipelineFields = {
  id: (p: PipelineRow) => toGid(MODELS.pipeline, p.id),
  iid: (p: PipelineRow) => String(p.iid),
  sha: (p: PipelineRow, args: { format?: string | null }) => (args.format === 'SHORT' ? p.sha.slice(0, 8) : p.sha),
  beforeSha: (p: PipelineRow) => p.before_sha,
  refPath: (p: PipelineRow) => `refs/${p.tag ? 'tags' : 'heads'}/${p.ref}`,
  status: (p: PipelineRow) => p.status.toUpperCase(),
  active: (p: PipelineRow) => ACTIVE.includes(p.status),
  // Ci::Pipeline#cancelable?: a job cancel would act on, the rule pipelineCancel applies.
  cancelable: async (p: PipelineRow, _: unknown, ctx: GqlContext) => hasCancelableJobs(await ctx.loaders.latestJobs.load(p.id)),
  retryable: async (p: PipelineRow, _: unknown, ctx: GqlContext) =>
    (await ctx.loaders.latestJobs.load(p.id)).some((j) => j.type === 'build' && (j.status === 'failed' || j.status === 'canceled')),
  complete: (p: PipelineRow) => COMPLETE.includes(p.status),
  // The stored duration and Ci::Pipeline#queued_duration, as REST shows them (pipeline-timing.ts).
  duration: (p: PipelineRow) => p.duration,
  queuedDuration: (p: PipelineRow) => pipelineQueuedDuration(p),
  createdAt: (p: PipelineRow) => p.created_at,
  updatedAt: (p: PipelineRow) => p.updated_at,
  startedAt: (p: PipelineRow) => p.started_at,
  finishedAt: (p: PipelineRow) => p.finished_at,
  committedAt: (p: PipelineRow) => commit(p).committed_date ?? null,
  user: (p: PipelineRow, _: unknown, ctx: GqlContext) => (p.user_id === null ? null : ctx.loaders.users.load(p.user_id)),
  project: (p: PipelineRow, _: unknown, ctx: GqlContext) => ctx.loaders.projects.load(p.project_id),
  path: async (p: PipelineRow, _: unknown, ctx: GqlContext) => `${await projectPath(ctx, p.project_id)}/-/pipelines/${p.id}`,
  jobs: async (p: PipelineRow, args: ConnectionArgs & { statuses?: string[] | null; retried?: boolean | null }, ctx: GqlContext) => {
    let jobs = await (args.retried === true ? ctx.loaders.allJobs : ctx.loaders.latestJobs).load(p.id);
    if (args.retried === true) jobs = jobs.filter((j) => j.retried === 1);
    const statuses = jobStatuses(args.statuses);
    if (statuses) jobs = jobs.filter((j) => statuses.includes(j.status));
    return connectionFromArray(jobs, args, 'asc');
  },
  job: async (p: PipelineRow, args: { id?: ParsedGid | null; name?: string | null }, ctx: GqlContext) => {
    const jobs = await ctx.loaders.latestJobs.load(p.id);
    if (args.id) return jobs.find((j) => j.id === args.id!.id) ?? null;
    if (typeof args.name === 'string') return jobs.find((j) => j.name === args.name) ?? null;
    throw new GraphQLError('One of id or name is required');
  },
  stages: async (p: PipelineRow, args: ConnectionArgs, ctx: GqlContext) => {
    const stages = new Map<string, { id: number; name: string; statuses: string[] }>();
    for (const j of await ctx.loaders.latestJobs.load(p.id)) {
      const s = stages.get(j.stage) ?? { id: j.stage_idx + 1, name: j.stage, statuses: [] };
      s.statuses.push(j.status);
      stages.set(j.stage, s);
    }
    const ordered = [...stages.values()].sort((a, b) => a.id - b.id).map(
      (s) => ({ id: s.id, name: s.name, status: stageStatus(s.statuses) }),
    );
    return connectionFromArray(ordered, args, 'asc');
  },
  downstream: async (p: PipelineRow, args: ConnectionArgs, ctx: GqlContext) => {
    const bridges = (await ctx.loaders.latestJobs.load(p.id)).filter((j) => j.downstream_pipeline_id !== null);
    const pipelines = await Promise.all(bridges.map((b) => readablePipeline(ctx, b.downstream_pipeline_id)));
    return connectionFromArray(pipelines.filter((x): x is PipelineRow => x !== null), args, 'asc');
  },
  upstream: async (p: PipelineRow, _: unknown, ctx: GqlContext) => {
    if (p.upstream_bridge_id === null) return null;
    const bridge = await ctx.loaders.jobs.load(p.upstream_bridge_id);
    return bridge ? readablePipeline(ctx, bridge.pipeline_id) : null;
  },
};

/** A stage's status from its jobs' (Ci::Stage composite status, reduced to kiln's states). */
function stageStatus(statuses: string[]): string {
  for (const s of ['running', 'pending', 'preparing', 'waiting_for_resource', 'failed', 'canceled', 'manual', 'scheduled', 'created']) {
    if (statuses.includes(s)) return s;
  }
  if (statuses.every((s) => s === 'skipped')) return 'skipped';
  return 'success';
}

const jobFields = {
  id: (j: BuildRow) => toGid(j.type === 'bridge' ? MODELS.bridge : MODELS.build, j.id),
  status: (j: BuildRow) => j.status.toUpperCase(),
  kind: (j: BuildRow) => (j.type === 'bridge' ? 'BRIDGE' : 'BUILD'),
  stage: (j: BuildRow) => ({ name: j.stage, status: null }),
  duration: (j: BuildRow) => {
    const d = j.started_at ? seconds(j.started_at, j.finished_at ?? (j.status === 'running' ? new Date().toISOString() : null)) : null;
    return d === null ? null : Math.round(d);
  },
  queuedDuration: (j: BuildRow) => (j.queued_at ? seconds(
    j.queued_at, j.started_at ?? (j.status === 'pending' ? new Date().toISOString() : null),
  ) : null),
  active: (j: BuildRow) => ACTIVE.includes(j.status),
  allowFailure: (j: BuildRow) => j.allow_failure === 1,
  // What the job actions of domain/jobs would accept (state-machine.ts, job-actions.ts).
  cancelable: (j: BuildRow) => transition(j.status, 'cancel') !== null,
  retryable: (j: BuildRow) => j.type === 'build' && j.retried === 0 && isRetryable(j.status),
  playable: (j: BuildRow) => j.run_when === 'manual' && j.retried === 0
    && (j.status === 'manual' || (j.type === 'build' && isRetryable(j.status))),
  manualJob: (j: BuildRow) => j.run_when === 'manual',
  retried: (j: BuildRow) => j.retried === 1,
  scheduled: (j: BuildRow) => j.status === 'scheduled',
  triggered: (j: BuildRow) => j.type === 'bridge',
  createdByTag: (j: BuildRow) => j.tag === 1,
  tags: (j: BuildRow) => (j.tag_list === '' ? [] : j.tag_list.split(' ')),
  refName: (j: BuildRow) => j.ref,
  refPath: (j: BuildRow) => `refs/${j.tag ? 'tags' : 'heads'}/${j.ref}`,
  shortSha: async (j: BuildRow, _: unknown, ctx: GqlContext) => (await ctx.loaders.pipelines.load(j.pipeline_id))?.sha.slice(0, 8) ?? '',
  webPath: async (j: BuildRow, _: unknown, ctx: GqlContext) => `${await projectPath(ctx, j.project_id)}/-/jobs/${j.id}`,
  playPath: async (j: BuildRow, _: unknown, ctx: GqlContext) => `${await projectPath(ctx, j.project_id)}/-/jobs/${j.id}/play`,
  retryPath: async (j: BuildRow, _: unknown, ctx: GqlContext) => `${await projectPath(ctx, j.project_id)}/-/jobs/${j.id}/retry`,
  cancelPath: async (j: BuildRow, _: unknown, ctx: GqlContext) => `${await projectPath(ctx, j.project_id)}/-/jobs/${j.id}/cancel`,
  createdAt: (j: BuildRow) => j.created_at,
  queuedAt: (j: BuildRow) => j.queued_at,
  startedAt: (j: BuildRow) => j.started_at,
  finishedAt: (j: BuildRow) => j.finished_at,
  erasedAt: (j: BuildRow) => j.erased_at,
  pipeline: (j: BuildRow, _: unknown, ctx: GqlContext) => ctx.loaders.pipelines.load(j.pipeline_id),
  project: (j: BuildRow, _: unknown, ctx: GqlContext) => ctx.loaders.projects.load(j.project_id),
  runner: (j: BuildRow, _: unknown, ctx: GqlContext) => (j.runner_id === null ? null : ctx.loaders.runners.load(j.runner_id)),
  downstreamPipeline: (j: BuildRow, _: unknown, ctx: GqlContext) => readablePipeline(ctx, j.downstream_pipeline_id),
  artifacts: async (j: BuildRow, args: ConnectionArgs, ctx: GqlContext) => {
    if (j.type !== 'build') return null;
    const base = await projectPath(ctx, j.project_id);
    const list = (await ctx.loaders.artifacts.load(j.id)).map((a: JobArtifactRow) => ({
      id: a.id, fileType: a.file_type.toUpperCase(),
      downloadPath: `${base}/-/jobs/${j.id}/artifacts/download?file_type=${encodeURIComponent(a.file_type)}`,
    }));
    return connectionFromArray(list, args, 'asc');
  },
  trace: (j: BuildRow) => (j.type === 'build' && j.trace_size > 0 ? j : null),
};

export const resolvers = {
  Pipeline: pipelineFields,
  CiJob: jobFields,
  CiJobTrace: {
    htmlSummary: async (j: BuildRow, args: { lastLines: number }, ctx: GqlContext) => {
      const lines = Math.max(1, Math.min(args.lastLines, MAX_SUMMARY_LINES));
      const file = path.join(ctx.kiln.config.dataDir, traceRelPath(j));
      // Only the tail is read: the last lines of a log are within its last 64 KiB per 100 lines here.
      const handle = await fs.open(file, 'r').catch(() => null);
      if (!handle) return '';
      try {
        const want = Math.min(j.trace_size, 64 * 1024);
        const buf = Buffer.alloc(want);
        await handle.read(buf, 0, want, j.trace_size - want);
        const text = buf.toString('utf8').replace(/\r?\n$/, '');
        return text.split(/\r?\n/).slice(-lines).map((l) => `<span>${escapeHtml(l)}</span>`).join('<br/>');
      } finally {
        await handle.close();
      }
    },
  },
};
