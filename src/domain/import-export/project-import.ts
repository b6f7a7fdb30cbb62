/**
 * Project import (the Service's Projects::GitlabProjectsImportService and RepositoryImportWorker
 * with Gitlab::ImportExport::Importer): the request stores the uploaded archive and creates the
 * project, named and placed as asked, with `import_status: scheduled`; the job reads the archive
 * (archive.ts: bounds, no path escaping, bombs refused), restores the repository and the wiki
 * from their bundles, and writes every record in one transaction with new ids and the archive's
 * iids. People are mapped by username, then e-mail, to this instance's users, else to the
 * importer (members who cannot be mapped are left out). Any failure leaves no record and an empty
 * repository behind: `import_status: failed` with `import_error`. An import with `overwrite`
 * replaces the project at its path only once complete (overwrite-project.ts).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { findProjectById, updateProjectRow } from '../projects/projects.queries.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { createBareRepository, inspectRepository, removeRepository, setHeadBranch } from '../repositories/repositories.ts';
import { runGit } from '../repositories/git-command.ts';
import { isValidRefName } from '../repositories/ref-name.ts';
import { wikiRepository } from '../wikis/wiki-repository.ts';
import { sealerFor } from '../ci-variables/encryption.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { insertMember } from '../members/members.queries.ts';
import { ArchiveError, readArchive } from './archive.ts';
import { FORMAT_VERSION, PROJECT_ENTRIES, PROJECT_LISTS, type ProjectDocument } from './export-format.ts';
import { PROJECT_OWN_COLUMNS } from './project-export.ts';
import {
  AWARD_COLUMNS, DIFF_COLUMNS, DIFF_COMMIT_COLUMNS, ISSUE_COLUMNS, LABEL_COLUMNS, MEMBER_COLUMNS, MERGE_REQUEST_COLUMNS,
  MILESTONE_COLUMNS, NOTE_COLUMNS, pick, PIPELINE_COLUMNS, RecordError, sourceId, VARIABLE_COLUMNS,
} from './record-columns.ts';
import {
  insertPlain, insertRecord, isMember, setProjectImportState, usersByUsernameOrEmail, type Row,
} from './import-export.queries.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { deleteProject, finishRemoval } from '../projects/delete-project.ts';
import { removeProjectUploads } from '../uploads/uploads.ts';
import { overwriteWithImport, OverwriteRefused, planOverwrite } from './overwrite-project.ts';

export const PROJECT_IMPORT_JOB = 'import_export.project_import';

export interface ProjectImportPayload {
  projectId: number;
  userId: number;
  /** The stored archive, under `<data dir>/imports/`. */
  file: string;
  /** Attributes that win over the archive's (`override_params`), checked by the request. */
  overrides: Record<string, unknown>;
  /**
   * With `overwrite`: the path of the project this import replaces once complete (the Service's
   * import_data `original_path`; overwrite-project.ts). The import itself lives beside it.
   */
  originalPath?: string;
}

export function importsDir(dataDir: string): string {
  return path.join(dataDir, 'imports');
}

/** An archive refused or a record it cannot restore: the import fails with this message. */
class ImportRefused extends Error {}

export async function runProjectImport(
  db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], dataDir: string, payload: ProjectImportPayload,
): Promise<void> {
  const project = await findProjectById(db, payload.projectId);
  const file = path.join(importsDir(dataDir), path.basename(payload.file));
  if (!project || project.import_status === 'finished' || project.import_status === 'failed') {
    await fsp.rm(file, { force: true });
    return;
  }
  await setProjectImportState(db, project.id, { import_status: 'started', import_error: null });
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'kiln-import-'));
  const gitDir = repositoryPath(shards, project.repository_storage, project.disk_path);
  try {
    const found = await readArchive(file, work, { entries: PROJECT_ENTRIES });
    if (!found.has('VERSION')
      || !found.has('project.json')) throw new ImportRefused('The archive is not a project export: VERSION or project.json is missing');
    const version = (await fsp.readFile(path.join(work, 'VERSION'), 'utf8')).trim();
    if (version !== FORMAT_VERSION) throw new ImportRefused(`The archive's version ${JSON.stringify(version.slice(0, 20))} is not supported (${FORMAT_VERSION} is)`);
    let doc: ProjectDocument;
    try {
      doc = JSON.parse(await fsp.readFile(path.join(work, 'project.json'), 'utf8')) as ProjectDocument;
    } catch {
      throw new ImportRefused('The archive\'s project.json is not valid JSON');
    }
    checkDocument(doc);
    await restoreRepository(gitDir, found.has('repository.bundle') ? path.join(work, 'repository.bundle') : null);
    const wikiDir = wikiRepository(shards, project).gitDir;
    if (found.has('wiki.bundle')) await restoreRepository(wikiDir, path.join(work, 'wiki.bundle'));
    const asked = typeof doc.project.default_branch === 'string' && isValidRefName(doc.project.default_branch)
      ? doc.project.default_branch : null;
    if (asked && found.has('repository.bundle')) await setHeadBranch(gitDir, asked);
    const state = await inspectRepository(gitDir, asked);
    const importer = await db.selectFrom('users').selectAll().where('id', '=', payload.userId).executeTakeFirst();
    if (!importer) throw new ImportRefused('The importer no longer exists');
    const plan = payload.originalPath === undefined ? undefined
      : await planOverwrite(db, importer, project.namespace_id, payload.originalPath);
    const sealer = await sealerFor(dataDir);
    // The records, the finished state and, with overwrite, the swap: one transaction, so an
    // overwritten project is replaced only by a complete import.
    const overwritten = await db.transaction().execute(async (trx) => {
      await writeRecords(trx, project, importer, doc, sealer.seal(''));
      const finished = await trx.updateTable('projects').set({
        ...carriedAttributes(doc.project, project), ...payload.overrides,
        default_branch: state.defaultBranch, empty_repo: state.empty ? 1 : 0, readme_path: state.readme,
        import_status: 'finished', import_error: null, import_failed_relations: '[]',
      }).where('id', '=', project.id).returningAll().executeTakeFirstOrThrow();
      return plan === undefined ? undefined : overwriteWithImport(trx, jobs, finished, plan, importer);
    });
    if (overwritten) {
      await finishRemoval(jobs, shards, overwritten.removal);
      await removeProjectUploads(dataDir, overwritten.oldId);
    }
  } catch (err) {
    const refused = err instanceof ArchiveError || err instanceof ImportRefused || err instanceof RecordError
      || err instanceof OverwriteRefused;
    if (!refused) throw err;
    await failImport(db, jobs, project, payload, gitDir, shards, err.message);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
  await fsp.rm(file, { force: true });
}

/**
 * When the job's runs are given up, or the archive is refused: nothing of it stays. An import
 * that was to overwrite a project goes altogether, its temporary project too, and the project it
 * was to replace stays as it was (it was never touched).
 */
async function failImport(
  db: Kysely<DB>, jobs: JobQueue, project: ProjectRow, payload: ProjectImportPayload, gitDir: string, shards: StorageShard[],
  message: string,
): Promise<void> {
  if (payload.originalPath !== undefined) {
    const removed = await deleteProject(db, jobs, shards, project.id, null);
    // A temporary project being moved between storages cannot go now: it stays, failed.
    if (removed.ok || removed.reason === 'not_found') return;
  }
  await fsp.rm(wikiRepository(shards, project).gitDir, { recursive: true, force: true });
  await removeRepository(gitDir);
  await createBareRepository(gitDir);
  await updateProjectRow(db, project.id, { default_branch: null, empty_repo: 1, readme_path: null });
  await setProjectImportState(db, project.id, { import_status: 'failed', import_error: message.slice(0, 1000),
    import_failed_relations: '[]' });
}

export async function projectImportGaveUp(
  db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], dataDir: string, payload: ProjectImportPayload, lastError: string,
): Promise<void> {
  const project = await findProjectById(db, payload.projectId);
  if (project) {
    await failImport(db, jobs, project, payload, repositoryPath(shards, project.repository_storage, project.disk_path), shards, lastError);
  }
  await fsp.rm(path.join(importsDir(dataDir), path.basename(payload.file)), { force: true });
}

function checkDocument(doc: unknown): asserts doc is ProjectDocument {
  if (typeof doc !== 'object' || doc === null
    || Array.isArray(doc)) throw new ImportRefused('The archive\'s project.json is not an object');
  const d = doc as Record<string, unknown>;
  if (d.version !== FORMAT_VERSION) throw new ImportRefused('The archive\'s project.json has an unsupported version');
  if (typeof d.project !== 'object' || d.project === null
    || Array.isArray(d.project)) throw new ImportRefused('The archive lacks the project');
  if (typeof d.users !== 'object' || d.users === null || Array.isArray(d.users)) throw new ImportRefused('The archive lacks its users');
  for (const list of PROJECT_LISTS) {
    const v = d[list];
    if (!Array.isArray(v) || v.some((r) => typeof r !== 'object' || r === null || Array.isArray(r))) {
      throw new ImportRefused(`The archive's ${list} is not a list of records`);
    }
  }
}

/** A fresh repository holding every ref of the bundle; its objects checked. */
async function restoreRepository(gitDir: string, bundle: string | null): Promise<void> {
  await removeRepository(gitDir);
  await createBareRepository(gitDir);
  if (!bundle) return;
  try {
    await runGit(['bundle', 'verify', '--quiet', bundle], { gitDir });
    await runGit(['fetch', '--quiet', '--no-write-fetch-head', bundle, '+refs/*:refs/*'], { gitDir });
    await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir });
  } catch (err) {
    throw new ImportRefused(`The archive's repository could not be restored: ${(err as Error).message.split('\n').slice(-2).join(' ').slice(0, 300)}`);
  }
}

/** The archive's project attributes that are columns here and not the project's identity or state. */
function carriedAttributes(attrs: Record<string, unknown>, project: ProjectRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const known = new Set(Object.keys(project));
  for (const [key, value] of Object.entries(attrs)) {
    if (PROJECT_OWN_COLUMNS.has(key) || !known.has(key) || key === 'path' || key === 'name' || key === 'default_branch') continue;
    if (key === 'visibility_level' || key === 'description') continue;
    const current = (project as unknown as Record<string, unknown>)[key];
    // Only values of the column's kind, bounded as the request's attributes are.
    if (value === null && current === null) continue;
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2147483647 && (typeof current === 'number'
      || current === null)) out[key] = value;
    else if (typeof value === 'string' && value.length <= 65535 && (typeof current === 'string' || current === null)
      && !value.includes('\0')) out[key] = value;
  }
  if (typeof attrs.description === 'string' && attrs.description.length <= 2000
    && project.description === null) out.description = attrs.description;
  return out;
}

async function writeRecords(trx: Transaction<DB>, project: ProjectRow, importer: UserRow, doc: ProjectDocument,
  emptyValue: string): Promise<void> {
  const projectId = project.id;
  // People: archive id → this instance's user id (username first, then e-mail).
  const refs = Object.entries(doc.users).slice(0, 100_000);
  const usernames: string[] = [];
  const emails: string[] = [];
  for (const [, ref] of refs) {
    if (typeof ref !== 'object' || ref === null) throw new RecordError('The archive\'s users are invalid');
    if (typeof ref.username === 'string' && ref.username.length <= 255) usernames.push(ref.username);
    if (typeof ref.email === 'string' && ref.email.length <= 255) emails.push(ref.email);
  }
  const found = await usersByUsernameOrEmail(trx, usernames, emails);
  const people = new Map<number, number>();
  for (const [id, ref] of refs) {
    const byName = found.find((u) => u.username.toLowerCase() === String(ref.username).toLowerCase());
    const byEmail = found.find((u) => u.email.toLowerCase() === String(ref.email).toLowerCase());
    const user = byName ?? byEmail;
    if (user && /^\d+$/.test(id)) people.set(Number(id), user.id);
  }
  const person = (list: string, row: Row, col: string): number | null => {
    const id = sourceId(list, row, col);
    return id === null ? null : people.get(id) ?? null;
  };
  const personOrImporter = (list: string, row: Row, col: string): number => person(list, row, col) ?? importer.id;

  const labels = new Map<number, number>();
  for (const row of doc.labels) {
    const id = await insertRecord(trx, 'labels', { ...pick('labels', row, LABEL_COLUMNS), project_id: projectId, group_id: null });
    labels.set(sourceId('labels', row)!, id);
    const priority = row.priority;
    if (typeof priority === 'number' && Number.isInteger(priority) && priority >= 0 && priority <= 2147483647) {
      await insertPlain(trx, 'label_priorities', [{ project_id: projectId, label_id: id, priority }]);
    }
  }
  const milestones = new Map<number, number>();
  for (const row of doc.milestones) {
    milestones.set(sourceId('milestones', row)!, await insertRecord(trx, 'milestones', {
      ...pick('milestones', row, MILESTONE_COLUMNS), project_id: projectId, group_id: null,
    }));
  }
  const mapped = (map: Map<number, number>, list: string, row: Row, col: string): number | null => {
    const id = sourceId(list, row, col);
    return id === null ? null : map.get(id) ?? null;
  };
  const issues = new Map<number, number>();
  for (const row of doc.issues) {
    issues.set(sourceId('issues', row)!, await insertRecord(trx, 'issues', {
      ...pick('issues', row, ISSUE_COLUMNS), project_id: projectId, author_id: personOrImporter('issues', row, 'author_id'),
      milestone_id: mapped(milestones, 'issues', row, 'milestone_id'), closed_by_id: person('issues', row, 'closed_by_id'),
      updated_by_id: person('issues', row, 'updated_by_id'), last_edited_by_id: person('issues', row, 'last_edited_by_id'),
      moved_to_id: null, duplicated_to_id: null,
    }));
  }
  const pairs = (list: string, rows: Row[], map: Map<number, number>, col: string) => {
    const seen = new Set<string>();
    const out: Row[] = [];
    for (const row of rows) {
      const target = mapped(map, list, row, col);
      const user = person(list, row, 'user_id');
      if (target === null || user === null || seen.has(`${target}:${user}`)) continue;
      seen.add(`${target}:${user}`);
      out.push({ [col]: target, user_id: user });
    }
    return out;
  };
  await insertPlain(trx, 'issue_assignees', pairs('issue_assignees', doc.issue_assignees, issues, 'issue_id'));
  const mrs = new Map<number, number>();
  for (const row of doc.merge_requests) {
    mrs.set(sourceId('merge_requests', row)!, await insertRecord(trx, 'merge_requests', {
      ...pick('merge_requests', row, MERGE_REQUEST_COLUMNS), project_id: projectId, source_project_id: projectId,
      author_id: personOrImporter('merge_requests', row, 'author_id'), milestone_id: mapped(milestones, 'merge_requests', row,
        'milestone_id'),
      merge_user_id: person('merge_requests', row, 'merge_user_id'), merged_by_id: person('merge_requests', row, 'merged_by_id'),
      closed_by_id: person('merge_requests', row, 'closed_by_id'), updated_by_id: person('merge_requests', row, 'updated_by_id'),
      last_edited_by_id: person('merge_requests', row, 'last_edited_by_id'), merge_when_pipeline_succeeds: 0,
      rebase_commit_sha: null, merge_ref_sha: null, merge_status_heads: null,
    }));
  }
  const now = new Date().toISOString();
  for (const [table, rows] of [['merge_request_assignees', doc.merge_request_assignees], ['merge_request_reviewers',
    doc.merge_request_reviewers]] as const) {
    await insertPlain(trx, table, pairs(table, rows, mrs, 'merge_request_id').map((r) => ({ ...r, created_at: now })));
  }
  const diffs = new Map<number, number>();
  for (const row of doc.merge_request_diffs) {
    const mr = mapped(mrs, 'merge_request_diffs', row, 'merge_request_id');
    if (mr === null) continue;
    diffs.set(sourceId('merge_request_diffs', row)!, await insertRecord(trx, 'merge_request_diffs', {
      ...pick('merge_request_diffs', row, DIFF_COLUMNS), merge_request_id: mr,
    }));
  }
  for (const row of doc.merge_request_diff_commits) {
    const diff = mapped(diffs, 'merge_request_diff_commits', row, 'merge_request_diff_id');
    if (diff === null) continue;
    await insertRecord(trx, 'merge_request_diff_commits', { ...pick('merge_request_diff_commits', row, DIFF_COMMIT_COLUMNS),
      merge_request_diff_id: diff });
  }
  const target = (list: string, row: Row, typeCol: string, idCol: string, notes?: Map<number,
    number>): { type: string; id: number } | null => {
    const type = row[typeCol];
    const map = type === 'Issue' ? issues : type === 'MergeRequest' ? mrs : type === 'Note' ? notes : undefined;
    if (!map) return null;
    const id = mapped(map, list, row, idCol);
    return id === null ? null : { type: type as string, id };
  };
  for (const row of doc.label_links) {
    const label = mapped(labels, 'label_links', row, 'label_id');
    const t = target('label_links', row, 'target_type', 'target_id');
    if (label === null || !t) continue;
    await insertRecord(trx, 'label_links', { label_id: label, target_type: t.type, target_id: t.id, created_at: now, updated_at: now });
  }
  const notes = new Map<number, number>();
  for (const row of doc.notes) {
    const t = target('notes', row, 'noteable_type', 'noteable_id');
    if (!t) continue;
    notes.set(sourceId('notes', row)!, await insertRecord(trx, 'notes', {
      ...pick('notes', row, NOTE_COLUMNS), noteable_type: t.type, noteable_id: t.id, project_id: projectId,
      author_id: personOrImporter('notes', row, 'author_id'), resolved_by_id: person('notes', row, 'resolved_by_id'),
      updated_by_id: person('notes', row, 'updated_by_id'),
    }));
  }
  const awarded = new Set<string>();
  for (const row of doc.award_emoji) {
    const t = target('award_emoji', row, 'awardable_type', 'awardable_id', notes);
    if (!t) continue;
    const picked = pick('award_emoji', row, AWARD_COLUMNS);
    const user = personOrImporter('award_emoji', row, 'user_id');
    const key = `${t.type}:${t.id}:${user}:${String(picked.name)}`;
    if (awarded.has(key)) continue;
    awarded.add(key);
    await insertRecord(trx, 'award_emoji', { ...picked, user_id: user, awardable_type: t.type, awardable_id: t.id });
  }
  for (const row of doc.ci_variables) {
    await insertRecord(trx, 'ci_variables', { ...pick('ci_variables', row, VARIABLE_COLUMNS), project_id: projectId, group_id: null,
      encrypted_value: emptyValue });
  }
  for (const row of doc.pipelines) {
    await insertRecord(trx, 'ci_pipelines', {
      ...pick('pipelines', row, PIPELINE_COLUMNS), project_id: projectId, user_id: person('pipelines', row, 'user_id'),
      merge_request_id: mapped(mrs, 'pipelines', row, 'merge_request_id'), upstream_bridge_id: null, pipeline_schedule_id: null,
    });
  }
  for (const row of doc.members) {
    const user = person('members', row, 'user_id');
    if (user === null || await isMember(trx, 'Project', projectId, user)) continue;
    const m = pick('members', row, MEMBER_COLUMNS);
    const level = Number(m.access_level);
    if (![10, 20, 30, 40, 50].includes(level)) continue;
    await insertMember(trx, { sourceType: 'Project', sourceId: projectId, userId: user, accessLevel: level,
      expiresAt: m.expires_at as string | null, createdById: importer.id });
  }
  // The importer keeps access to what they imported (the Service's MembersMapper#ensure_default_member!).
  if (!await isMember(trx, 'Project', projectId, importer.id)) {
    await insertMember(trx, { sourceType: 'Project', sourceId: projectId, userId: importer.id, accessLevel: ACCESS_LEVELS.maintainer,
      createdById: importer.id });
  }
}
