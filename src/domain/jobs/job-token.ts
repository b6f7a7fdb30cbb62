/**
 * Job tokens (spec, Authentication: job token): a token authenticates only while its job runs,
 * as the user who created the job. Registered as AppDeps.jobTokens.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { digest } from '../tokens/secret.ts';
import { findRunningJobByTokenDigest } from './jobs.queries.ts';

export async function resolveJobToken(db: Kysely<DB>, token: string): Promise<{ jobId: number; userId: number } | null> {
  const job = await findRunningJobByTokenDigest(db, digest(token));
  if (!job || job.user_id === null) return null;
  return { jobId: job.id, userId: job.user_id };
}
