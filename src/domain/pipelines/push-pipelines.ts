/**
 * Pipelines for pushed refs (the Service's Git::BranchPushService / Git::TagPushService →
 * Ci::CreatePipelineService with source `push`): one per updated branch or created tag whose
 * new commit holds the CI configuration, with the commit the ref had before as `before_sha`.
 *
 * - A deleted ref creates nothing; nor does a commit without `.gitlab-ci.yml`.
 * - `[ci skip]` / `[skip ci]` in the commit message (any case, `-`/`_`/space between the words),
 *   or the `ci.skip` push option, keeps a pipeline in `skipped` without jobs (Chain::Skip).
 * - A configuration error keeps a `failed` pipeline whose `yaml_errors` says why; a pipeline
 *   filtered out by `workflow:rules` or left without jobs is not created.
 *
 * Callers run this after the push was accepted and do not wait for it: a slow or failing
 * pipeline never slows or fails a push. Errors are the caller's to log.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import { runGit } from '../repositories/git-command.ts';
import type { CiEnv } from './ci-env.ts';
import { createPipeline } from './create-pipeline.ts';
import { CI_CONFIG_PATH, projectGitDir, type CreatePipelineResult } from './create-pipeline-rows.ts';
import { BLANK_SHA, readCommit, readFileAt } from './git-source.ts';
import { insertPipelineWithJobs } from './pipelines.queries.ts';
import { resolvePipelineVariables } from '../ci-variables/collect-variables.ts';

export interface RefUpdate {
  ref: string;
  before: string;
  after: string;
}

/** Ref updates one push may create pipelines for (the Service's PIPELINE_PROCESS_LIMIT is 4 for branches). */
const MAX_PIPELINES_PER_PUSH = 20;
export const SKIP_PATTERN = /\[(ci[ _-]skip|skip[ _-]ci)\]/i;

/** Branches and tags of a repository: full ref name → commit id. */
export async function snapshotRefs(gitDir: string): Promise<Map<string, string>> {
  const { stdout, exitCode } = await runGit(
    ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'],
    { gitDir, okExitCodes: [128] },
  );
  const out = new Map<string, string>();
  if (exitCode !== 0) return out;
  for (const line of stdout.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) out.set(line.slice(space + 1), line.slice(0, space));
  }
  return out;
}

/** What changed between two snapshots, as receive-pack's ref updates. */
export function refUpdates(before: Map<string, string>, after: Map<string, string>): RefUpdate[] {
  const out: RefUpdate[] = [];
  for (const [ref, sha] of after) {
    const old = before.get(ref) ?? BLANK_SHA;
    if (old !== sha) out.push({ ref, before: old, after: sha });
  }
  for (const [ref, sha] of before) if (!after.has(ref)) out.push({ ref, before: sha, after: BLANK_SHA });
  return out;
}

function refKind(ref: string): { name: string; tag: boolean } | null {
  if (ref.startsWith('refs/heads/')) return { name: ref.slice('refs/heads/'.length), tag: false };
  if (ref.startsWith('refs/tags/')) return { name: ref.slice('refs/tags/'.length), tag: true };
  if (ref.startsWith('refs/')) return null;
  return { name: ref, tag: false };
}

export interface PushOptions {
  /** Push options (`git push -o ci.skip`). */
  pushOptions?: string[];
}

export async function skippedPipeline(
  env: CiEnv, project: ProjectRow, u: { name: string; tag: boolean; before: string; after: string },
  userId: number, commitData: string, o: { source?: string; mergeRequestId?: number } = {},
) {
  const now = new Date().toISOString();
  return env.db.transaction().execute((trx) => insertPipelineWithJobs(trx, {
    project_id: project.id, ref: u.name, tag: u.tag ? 1 : 0, sha: u.after, before_sha: u.before, source: o.source ?? 'push',
    status: 'skipped', merge_request_id: o.mergeRequestId ?? null,
    user_id: userId, upstream_bridge_id: null, config_path: CI_CONFIG_PATH, commit_data: commitData, started_at: null, finished_at: now,
  }, []));
}

export async function createPushPipelines(
  env: CiEnv, project: ProjectRow, updates: RefUpdate[], userId: number, o: PushOptions = {},
): Promise<CreatePipelineResult[]> {
  const gitDir = projectGitDir(env, project);
  const results: CreatePipelineResult[] = [];
  const skipOption = (o.pushOptions ?? []).some((p) => p === 'ci.skip');
  for (const u of updates.slice(0, MAX_PIPELINES_PER_PUSH)) {
    const kind = refKind(u.ref);
    if (!kind || !/^[0-9a-f]{40}$/.test(u.after) || u.after === BLANK_SHA) continue;
    // A tag that moved is not a new tag; the Service runs tag pipelines on creation only.
    if (kind.tag && u.before !== BLANK_SHA) continue;
    if (await readFileAt(gitDir, u.after, CI_CONFIG_PATH) === null) continue;
    const commit = await readCommit(gitDir, u.after);
    if (skipOption || SKIP_PATTERN.test(commit.message)) {
      results.push({
        ok: true,
        pipeline: await skippedPipeline(env, project, { ...kind, before: u.before, after: u.after }, userId, JSON.stringify(commit)),
      });
      continue;
    }
    // The project's, its groups' and the instance's CI/CD variables, as `rules:if` sees them.
    const variables = await resolvePipelineVariables(env.db, env.dataDir, project, kind.name, []);
    results.push(await createPipeline(env, {
      project, ref: kind.name, userId, source: 'push', at: {
        sha: u.after, tag: kind.tag,
      }, beforeSha: u.before, persistConfigErrors: true, variables,
    }));
  }
  return results;
}
