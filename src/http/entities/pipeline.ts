/**
 * Pipeline entities (reference §3.3): PipelineBasic, as jobs and bridges embed it and lists show
 * it, and Pipeline for GET /projects/:id/pipelines/:pipeline_id; the Commit entity of a job.
 */
import { Type, type Static } from 'typebox';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { UserRow } from '../../db/types.ts';
import type { CommitData } from '../../domain/pipelines/git-source.ts';
import { PIPELINE_COMPLETED } from '../../domain/pipelines/composite-status.ts';
import { pipelineQueuedDuration } from '../../domain/pipelines/pipeline-timing.ts';
import { UserBasicSchema, presentUserBasic } from './user.ts';
import { flat } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const PipelineBasicSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  sha: Type.String(),
  ref: Type.String(),
  status: Type.String(),
  source: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  web_url: Type.String(),
}, { title: 'PipelineBasic' });
export type PipelineBasic = Static<typeof PipelineBasicSchema>;

export const DetailedStatusSchema = Type.Object({
  icon: Type.String(),
  text: Type.String(),
  label: Type.String(),
  group: Type.String(),
  tooltip: Type.String(),
  has_details: Type.Boolean(),
  details_path: Type.String(),
  illustration: Type.Null(),
  favicon: Type.String(),
});

export const PipelineSchema = Type.Object({
  ...PipelineBasicSchema.properties,
  before_sha: Type.String(),
  tag: Type.Boolean(),
  /** workflow:name as the pipeline got it (the Service's Pipeline entity gained `name` after 15.2), or null. */
  name: NString,
  yaml_errors: NString,
  user: Type.Union([UserBasicSchema, Type.Null()]),
  started_at: NString,
  finished_at: NString,
  committed_at: NString,
  /** Whole seconds (an integer column in the Service); go-gitlab decodes both into ints. */
  duration: Type.Union([Type.Integer(), Type.Null()]),
  queued_duration: Type.Union([Type.Integer(), Type.Null()]),
  /** The mean of the jobs' coverage as the Service writes it, a string with two decimals ("97.50"). */
  coverage: NString,
  detailed_status: DetailedStatusSchema,
}, { title: 'Pipeline' });
export type Pipeline = Static<typeof PipelineSchema>;

export const CommitSchema = Type.Object({
  id: Type.String(),
  short_id: Type.String(),
  created_at: Type.String(),
  parent_ids: Type.Array(Type.String()),
  title: Type.String(),
  message: Type.String(),
  author_name: Type.String(),
  author_email: Type.String(),
  authored_date: Type.String(),
  committer_name: Type.String(),
  committer_email: Type.String(),
  committed_date: Type.String(),
  trailers: Type.Record(Type.String(), Type.String()),
  web_url: Type.String(),
}, { title: 'Commit' });
export type Commit = Static<typeof CommitSchema>;

/** The columns PipelineBasic is made of: lists read only these (not the commit). */
export const PIPELINE_BASIC_COLUMNS = [
  'id', 'iid', 'project_id', 'sha', 'ref', 'status', 'source', 'created_at', 'updated_at',
] as const satisfies readonly (keyof PipelineRow)[];
export type PipelineBasicRow = Pick<PipelineRow, (typeof PIPELINE_BASIC_COLUMNS)[number]>;

export function presentPipelineBasic(p: PipelineBasicRow, projectWebUrl: string): PipelineBasic {
  return {
    id: p.id, iid: p.iid, project_id: p.project_id, sha: p.sha, ref: p.ref, status: p.status, source: p.source,
    created_at: p.created_at, updated_at: p.updated_at, web_url: flat(projectWebUrl, '/-/pipelines/', p.id),
  };
}

export function presentCommit(p: PipelineRow, projectWebUrl: string): Commit {
  const c = JSON.parse(p.commit_data) as CommitData;
  // Field by field in the entity's order: the stored JSON's order is the writer's (and job pages
  // are written by JSON.stringify, entities/serializers.ts exactJson).
  return {
    id: c.id, short_id: c.short_id, created_at: c.created_at, parent_ids: c.parent_ids, title: c.title, message: c.message,
    author_name: c.author_name, author_email: c.author_email, authored_date: c.authored_date,
    committer_name: c.committer_name, committer_email: c.committer_email, committed_date: c.committed_date,
    trailers: {}, web_url: flat(projectWebUrl, '/-/commit/', c.id),
  };
}

const STATUS_TEXT: Record<string, { text: string; label: string }> = {
  created: { text: 'created', label: 'created' },
  pending: { text: 'pending', label: 'pending' },
  running: { text: 'running', label: 'running' },
  success: { text: 'passed', label: 'passed' },
  failed: { text: 'failed', label: 'failed' },
  canceled: { text: 'canceled', label: 'canceled' },
  skipped: { text: 'skipped', label: 'skipped' },
  manual: { text: 'blocked', label: 'waiting for manual action' },
};

/**
 * `coverage` is Ci::Pipeline#coverage (pipeline-timing.ts), which the routes that show a
 * pipeline with finished jobs read; a pipeline just created has none.
 */
export function presentPipeline(
  p: PipelineRow, projectWebUrl: string, user: UserRow | null, externalUrl: string, coverage: string | null = null,
): Pipeline {
  const basic = presentPipelineBasic(p, projectWebUrl);
  const words = STATUS_TEXT[p.status] ?? { text: p.status, label: p.status };
  const group = p.status === 'success' ? 'success' : p.status;
  const commit = JSON.parse(p.commit_data) as CommitData;
  return {
    ...basic,
    before_sha: p.before_sha,
    tag: p.tag === 1,
    name: p.name ?? null,
    yaml_errors: p.yaml_errors ?? null,
    user: user ? presentUserBasic(user, {}, { externalUrl, canReadProfile: false }) : null,
    started_at: p.started_at,
    finished_at: p.finished_at,
    committed_at: commit.committed_date,
    duration: p.duration,
    queued_duration: pipelineQueuedDuration(p),
    coverage,
    detailed_status: {
      icon: flat('status_', group), text: words.text, label: words.label, group, tooltip: words.label,
      has_details: true, details_path: new URL(basic.web_url).pathname, illustration: null,
      favicon: flat('/assets/ci_favicons/favicon_status_', group, '.png'),
    },
  };
}

export const isPipelineCompleted = (status: string) => PIPELINE_COMPLETED.includes(status);
