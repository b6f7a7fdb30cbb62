/**
 * A project's statistics (the Service's ProjectStatistics, refreshed by its
 * ProjectCacheWorker / UpdateProjectStatisticsWorker after pushes and uploads): measured by a
 * background job, read by `statistics=true` and GET /projects/:id/statistics; and its git fetches
 * per day (ProjectDailyStatistic), counted as upload-pack is served over HTTP and SSH.
 *
 * kiln keeps no wikis, LFS objects, packages, pipeline artifacts or project uploads, so those
 * sizes are zero; the repository, the project's snippet repositories and its job artifacts are
 * measured. storage_size is their sum, as the Service's.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { ProjectStatisticsRow } from '../../db/tables/project-statistics.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { runGit } from '../repositories/git-command.ts';
import { todayDate } from '../clock.ts';
import { featureEnabled } from '../features/features.ts';
import {
  artifactsSize, countFetch, dailyFetches, projectSnippetRepositories, refreshQueued, saveStatistics,
} from './project-statistics.queries.ts';

export const REFRESH_STATISTICS_JOB = 'project_statistics.refresh';

/** Queues a refresh of the project's statistics unless one is already waiting. */
export async function scheduleStatisticsRefresh(db: Kysely<DB>, projectId: number): Promise<void> {
  if (!(await featureEnabled(db, 'project_statistics_refresh', { kind: 'Project', id: projectId }))) return;
  const payload = { projectId };
  if (await refreshQueued(db, REFRESH_STATISTICS_JOB, JSON.stringify(payload))) return;
  await insertJob(db, { kind: REFRESH_STATISTICS_JOB, payload, maxAttempts: 3 });
}

/** Bytes under `dir` (files as stored, the Service's repository size); 0 when it is absent. */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await directorySize(p);
    else if (e.isFile()) total += (await fs.stat(p).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** Commits reachable from HEAD (Repository#commit_count: the default branch's). */
async function commitCount(gitDir: string): Promise<number> {
  const out = await runGit(['rev-list', '--count', 'HEAD'], { gitDir, okExitCodes: [128] }).catch(() => ({ stdout: '0', exitCode: 0 }));
  return out.exitCode === 0 ? Number(out.stdout.trim()) || 0 : 0;
}

export async function refreshProjectStatistics(db: Kysely<DB>, shards: StorageShard[], projectId: number): Promise<void> {
  const project = await findProjectById(db, projectId);
  if (!project) return;
  const gitDir = repositoryPath(shards, project.repository_storage, project.disk_path);
  const snippets = await projectSnippetRepositories(db, projectId);
  const [repositorySize, commits, artifacts, snippetSizes] = await Promise.all([
    directorySize(gitDir), commitCount(gitDir), artifactsSize(db, projectId),
    Promise.all(snippets.map((s) => directorySize(repositoryPath(shards, s.repository_storage, s.disk_path)))),
  ]);
  const snippetsSize = snippetSizes.reduce((a, b) => a + b, 0);
  await saveStatistics(db, {
    project_id: projectId, commit_count: commits, repository_size: repositorySize, wiki_size: 0, lfs_objects_size: 0,
    build_artifacts_size: artifacts, pipeline_artifacts_size: 0, packages_size: 0, snippets_size: snippetsSize, uploads_size: 0,
    storage_size: repositorySize + artifacts + snippetsSize,
  });
}

/** ProjectStatistics entity (lib/api/entities/project_statistics.rb), zeros before the first refresh. */
export function presentStatistics(row: ProjectStatisticsRow | undefined) {
  const n = (v: number | string | undefined) => Number(v ?? 0);
  return {
    commit_count: n(row?.commit_count), storage_size: n(row?.storage_size), repository_size: n(row?.repository_size),
    wiki_size: n(row?.wiki_size), lfs_objects_size: n(row?.lfs_objects_size), job_artifacts_size: n(row?.build_artifacts_size),
    pipeline_artifacts_size: n(row?.pipeline_artifacts_size), packages_size: n(row?.packages_size),
    snippets_size: n(row?.snippets_size), uploads_size: n(row?.uploads_size),
  };
}

/** Counts one git fetch of the project (upload-pack over HTTP or SSH). */
export async function recordProjectFetch(db: Kysely<DB>, projectId: number): Promise<void> {
  if (!(await featureEnabled(db, 'project_daily_fetch_statistics', { kind: 'Project', id: projectId }))) return;
  await countFetch(db, projectId, todayDate());
}

/**
 * ProjectDailyStatisticsFinder: the last 30 days with fetches (today included), newest first,
 * and their total (the Service's `fetches: { total, days: [{ count, date }] }`).
 */
export async function fetchStatistics(db: Kysely<DB>, projectId: number, now = new Date()) {
  const from = new Date(now.getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const days = await dailyFetches(db, projectId, from);
  return {
    fetches: {
      total: days.reduce((a, d) => a + d.fetch_count, 0),
      days: days.map((d) => ({ count: d.fetch_count, date: d.date })),
    },
  };
}
