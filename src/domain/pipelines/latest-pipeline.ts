/**
 * GET /projects/:id/pipelines/latest (Project#latest_pipeline): the newest pipeline of a ref that
 * ran for the commit the ref names now, not merely the newest pipeline of the ref.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { resolveRef } from './git-source.ts';
import { newestPipelineAt } from './pipeline-actions.queries.ts';

/** Longest ref looked up: git's own refs are far shorter, and the value goes to a child process. */
const MAX_REF = 1024;

export async function latestPipelineFor(
  db: Kysely<DB>, gitDir: string, project: ProjectRow, ref: string | undefined,
): Promise<PipelineRow | undefined> {
  const name = ref || project.default_branch;
  if (!name || name.length > MAX_REF || name.includes('\0')) return undefined;
  const head = await resolveRef(gitDir, name);
  if (!head) return undefined;
  return newestPipelineAt(db, project.id, name, head.sha);
}
