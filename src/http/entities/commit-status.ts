/**
 * The Service's CommitStatus entity (lib/api/entities/commit_status.rb): a job of a commit's
 * pipelines as the commit statuses API shows it, builds and external statuses alike; `sha` is
 * the pipeline's commit, `author` the job's user.
 */
import { Type, type Static } from 'typebox';
import type { BuildRow } from '../../db/tables/ci.ts';
import type { UserRow } from '../../db/types.ts';
import { presentUserBasic, UserBasicSchema } from './user.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const CommitStatusSchema = Type.Object({
  id: Type.Integer(),
  sha: Type.String(),
  ref: NString,
  status: Type.String(),
  name: Type.String(),
  target_url: NString,
  description: NString,
  created_at: Type.String(),
  started_at: NString,
  finished_at: NString,
  allow_failure: Type.Boolean(),
  coverage: Type.Union([Type.Number(), Type.Null()]),
  author: Type.Union([UserBasicSchema, Type.Null()]),
}, { title: 'CommitStatus' });
export type CommitStatus = Static<typeof CommitStatusSchema>;

export function presentCommitStatus(j: BuildRow, sha: string, author: UserRow | null, externalUrl: string): CommitStatus {
  return {
    id: j.id, sha, ref: j.ref, status: j.status, name: j.name, target_url: j.target_url, description: j.description,
    created_at: j.created_at, started_at: j.started_at, finished_at: j.finished_at, allow_failure: j.allow_failure === 1,
    coverage: j.coverage === null ? null : Number(j.coverage),
    author: author ? presentUserBasic(author, {}, { externalUrl, canReadProfile: false }) : null,
  };
}
