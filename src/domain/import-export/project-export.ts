/**
 * Project export (the Service's Projects::ImportExport::ExportService run by ProjectExportWorker):
 * `requestProjectExport` replaces the project's export with a queued one and queues the job; the
 * job writes the archive (export-format.ts) under `<data dir>/exports/`, marks it finished and,
 * when an `upload[url]` was given, sends it there (the Service's WebUploadStrategy: PUT or POST of
 * the file, to an address the webhooks' address guard allows).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import type { ProjectExportRow } from '../../db/tables/import-export.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { repositoryExists } from '../repositories/repositories.ts';
import { runGit } from '../repositories/git-command.ts';
import { wikiRepository } from '../wikis/wiki-repository.ts';
import { currentSettings } from '../settings/settings.ts';
import { checkDeliveryUrl } from '../web-hooks/url-policy.ts';
import { guardedLookup } from '../web-hooks/delivery.ts';
import { nowIso } from '../clock.ts';
import { writeArchive } from './archive.ts';
import { FORMAT_VERSION, type ProjectDocument, type UserRef } from './export-format.ts';
import {
  findProjectExportById, readProjectRecords, replaceProjectExport, setProjectExportState, userRefs, type Row,
} from './import-export.queries.ts';

export const PROJECT_EXPORT_JOB = 'import_export.project_export';

export interface ProjectExportPayload { exportId: number }

/** Columns of the project row that are its identity, place or state: never carried in an archive. */
export const PROJECT_OWN_COLUMNS = new Set<string>([
  'id', 'name', 'path', 'namespace_id', 'creator_id', 'repository_storage', 'disk_path', 'read_only', 'empty_repo', 'pending_delete',
  'import_status', 'import_error', 'import_type', 'import_failed_relations', 'objects_from_project_id', 'last_activity_at',
  'created_at', 'updated_at', 'readme_path', 'open_issues_count', 'open_public_issues_count', 'archived', 'runners_token',
  'runners_token_digest', 'encrypted_runners_token',
]);

export function exportsDir(dataDir: string): string {
  return path.join(dataDir, 'exports');
}

export async function requestProjectExport(
  db: Kysely<DB>, jobs: JobQueue,
  v: { projectId: number; userId: number; description: string | null; uploadUrl: string | null; uploadMethod: string | null },
): Promise<ProjectExportRow> {
  const row = await db.transaction().execute(async (trx) => {
    const made = await replaceProjectExport(trx, v);
    await jobs.enqueue(PROJECT_EXPORT_JOB, { exportId: made.id } satisfies ProjectExportPayload, { trx });
    return made;
  });
  jobs.wake();
  return row;
}

/** `git bundle` of every ref of `gitDir` into `file`; false when the repository has no ref to bundle. */
export async function bundleRepository(gitDir: string, file: string): Promise<boolean> {
  if (!(await repositoryExists(gitDir))) return false;
  const { stdout } = await runGit(['for-each-ref', '--count=1', '--format=%(refname)'], { gitDir });
  if (stdout.trim() === '') return false;
  await runGit(['bundle', 'create', file, '--all'], { gitDir });
  return true;
}

/** The project's records as the archive's document (export-format.ts). */
export async function projectDocument(db: Kysely<DB>, project: Row): Promise<ProjectDocument> {
  const records = await readProjectRecords(db, project.id as number);
  const userIds = new Set<number>();
  const collect = (rows: Row[], cols: string[]) => {
    for (const r of rows) for (const c of cols) if (typeof r[c] === 'number') userIds.add(r[c] as number);
  };
  collect(records.issues, ['author_id', 'closed_by_id', 'updated_by_id', 'last_edited_by_id']);
  collect(records.issueAssignees, ['user_id']);
  collect(records.mergeRequests, ['author_id', 'merge_user_id', 'merged_by_id', 'closed_by_id', 'updated_by_id', 'last_edited_by_id']);
  collect(records.mrAssignees, ['user_id']);
  collect(records.mrReviewers, ['user_id']);
  collect(records.notes, ['author_id', 'resolved_by_id', 'updated_by_id']);
  collect(records.awardEmoji, ['user_id']);
  collect(records.pipelines, ['user_id']);
  collect(records.members, ['user_id']);
  const users: Record<string, UserRef> = {};
  for (const u of await userRefs(db, [...userIds])) users[String(u.id)] = { username: u.username, email: u.email };
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(project)) if (!PROJECT_OWN_COLUMNS.has(key)) attributes[key] = value;
  attributes.name = project.name;
  attributes.path = project.path;
  return {
    version: FORMAT_VERSION, exported_at: nowIso(), project: attributes, users,
    labels: records.labels, milestones: records.milestones, issues: records.issues, issue_assignees: records.issueAssignees,
    merge_requests: records.mergeRequests, merge_request_assignees: records.mrAssignees, merge_request_reviewers: records.mrReviewers,
    merge_request_diffs: records.mrDiffs, merge_request_diff_commits: records.mrDiffCommits, label_links: records.labelLinks,
    notes: records.notes, award_emoji: records.awardEmoji, ci_variables: records.ciVariables, pipelines: records.pipelines,
    members: records.members,
  };
}

/** The job. Idempotent: a run makes the whole archive again. */
export async function runProjectExport(
  db: Kysely<DB>, shards: StorageShard[], dataDir: string, payload: ProjectExportPayload,
): Promise<void> {
  const row = await findProjectExportById(db, payload.exportId);
  if (!row || row.status === 'finished') return;
  const project = await findProjectById(db, row.project_id);
  if (!project) return;
  await setProjectExportState(db, row.id, { status: 'started' });
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'kiln-export-'));
  try {
    const files: { name: string; file?: string; content?: string }[] = [{ name: 'VERSION', content: `${FORMAT_VERSION}\n` }];
    const doc = await projectDocument(db, project as unknown as Row);
    files.push({ name: 'project.json', content: JSON.stringify(doc) });
    const gitDir = repositoryPath(shards, project.repository_storage, project.disk_path);
    if (await bundleRepository(gitDir, path.join(work, 'repository.bundle'))) files.push({ name: 'repository.bundle',
      file: path.join(work, 'repository.bundle') });
    const wikiDir = wikiRepository(shards, project).gitDir;
    if (await bundleRepository(wikiDir, path.join(work, 'wiki.bundle'))) files.push({ name: 'wiki.bundle', file: path.join(work,
      'wiki.bundle') });
    await fsp.mkdir(exportsDir(dataDir), { recursive: true, mode: 0o700 });
    const fileName = `project-${project.id}-${crypto.randomBytes(8).toString('hex')}.tar.gz`;
    await writeArchive(path.join(exportsDir(dataDir), fileName), files);
    if (row.file_name) await fsp.rm(path.join(exportsDir(dataDir), path.basename(row.file_name)), { force: true });
    await setProjectExportState(db, row.id, { status: 'finished', file_name: fileName, error: null });
    if (row.upload_url) {
      const settings = await currentSettings(db);
      // A refused or failed upload leaves the archive downloadable; the reason is kept on the row.
      await uploadArchive(path.join(exportsDir(dataDir), fileName), row.upload_url, row.upload_method ?? 'PUT',
        settings.allow_local_requests_from_web_hooks_and_services)
        .catch((err: unknown) => setProjectExportState(db, row.id, { status: 'finished', error: (err as Error).message.slice(0, 1000) }));
    }
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}

export async function projectExportGaveUp(db: Kysely<DB>, payload: ProjectExportPayload, lastError: string): Promise<void> {
  await setProjectExportState(db, payload.exportId, { status: 'failed', error: lastError.slice(0, 1000) });
}

/** The file an export's row names, when it is there. */
/** The download's file name: `2026-11-27_10-12-04_<full path with _ for />_export.tar.gz`, as the Service names it. */
export function exportArchiveName(fullPath: string, now = new Date()): string {
  const stamp = now.toISOString().slice(0, 19).replace('T', '_').replace(/:/g, '-');
  return `${stamp}_${fullPath.replace(/\//g, '_')}_export.tar.gz`;
}

export async function exportFile(dataDir: string, fileName: string | null): Promise<{ path: string; size: number } | null> {
  if (!fileName) return null;
  const file = path.join(exportsDir(dataDir), path.basename(fileName));
  try {
    const st = await fsp.stat(file);
    return { path: file, size: st.size };
  } catch {
    return null;
  }
}

/** Sends the archive to `url` (WebUploadStrategy): the body is the file, addresses checked as the connection resolves them. */
async function uploadArchive(file: string, url: string, method: string, allowLocal: boolean): Promise<void> {
  const target = checkDeliveryUrl(url, allowLocal);
  const { size } = await fsp.stat(file);
  const client = target.protocol === 'https:' ? https : http;
  await new Promise<void>((resolve, reject) => {
    const req = client.request(target, {
      method, lookup: guardedLookup(allowLocal), timeout: 60_000,
      headers: { 'content-type': 'application/gzip', 'content-length': String(size) },
    }, (res) => {
      res.resume();
      res.on('end', () => ((res.statusCode ?? 500) < 400 ? resolve() : reject(new Error(`the upload answered ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('the upload timed out')));
    req.on('error', reject);
    fs.createReadStream(file).on('error', reject).pipe(req);
  });
}
