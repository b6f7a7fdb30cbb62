/**
 * The commit entities of the Service's repository API: Commit (lists, branches, tags) and
 * CommitDetail (one commit, a new API commit) with its line stats, its project and its last
 * pipeline's status. Dates are UTC, as kiln's pipeline entities give a commit's.
 */
import { Type, type Static } from 'typebox';
import type { CommitInfo, CommitStats } from '../../domain/repositories/git-read.ts';
import { CommitSchema as PipelineCommitSchema, PipelineBasicSchema, type PipelineBasic } from './pipeline.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const CommitStatsSchema = Type.Object({
  additions: Type.Integer(),
  deletions: Type.Integer(),
  total: Type.Integer(),
}, { title: 'CommitStats' });

/** The Commit entity pipelines' and jobs' commits use (pipeline.ts), with the line stats lists may ask for. */
export const CommitSchema = Type.Object({
  ...PipelineCommitSchema.properties,
  stats: Type.Optional(CommitStatsSchema),
}, { title: 'Commit' });

export const CommitDetailSchema = Type.Object({
  ...CommitSchema.properties,
  status: NString,
  project_id: Type.Integer(),
  last_pipeline: Type.Union([PipelineBasicSchema, Type.Null()]),
}, { title: 'CommitDetail' });

export type Commit = Static<typeof CommitSchema>;
export type CommitDetail = Static<typeof CommitDetailSchema>;

export function presentCommit(c: CommitInfo, projectWebUrl: string, stats?: CommitStats): Commit {
  const message = c.message;
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    created_at: c.committedDate,
    parent_ids: c.parentIds,
    title: message.split('\n', 1)[0],
    message,
    author_name: c.authorName,
    author_email: c.authorEmail,
    authored_date: c.authoredDate,
    committer_name: c.committerName,
    committer_email: c.committerEmail,
    committed_date: c.committedDate,
    trailers: {},
    web_url: `${projectWebUrl}/-/commit/${c.id}`,
    ...(stats ? { stats } : {}),
  };
}

export function presentCommitDetail(
  c: CommitInfo, projectWebUrl: string, projectId: number, stats: CommitStats | undefined,
  lastPipeline: PipelineBasic | null,
): CommitDetail {
  return {
    ...presentCommit(c, projectWebUrl, stats), status: lastPipeline?.status ?? null, project_id: projectId,
    last_pipeline: lastPipeline,
  };
}
