/**
 * Group export and import (the Service's Groups::ImportExport::ExportService and ImportService,
 * run by GroupExportWorker / GroupImportWorker). The archive holds `VERSION` and `group.json`:
 * the group with its labels, milestones and members, and its subgroups the same way, down the
 * tree. Import makes the group at once (named and placed as the request asks: the request's
 * answer is only 202, as the Service's) and a job adds what the archive holds, the subgroups
 * through createGroup, the records in one transaction per group.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import type { GroupExportRow } from '../../db/tables/import-export.ts';
import { createGroup } from '../groups/create-group.ts';
import { findNamespaceById, namespacePaths } from '../namespaces/namespaces.queries.ts';
import { insertMember } from '../members/members.queries.ts';
import { nowIso } from '../clock.ts';
import { ArchiveError, readArchive, writeArchive } from './archive.ts';
import { FORMAT_VERSION, GROUP_ENTRIES, type GroupDocument, type GroupDocumentNode, type UserRef } from './export-format.ts';
import { exportsDir } from './project-export.ts';
import { importsDir } from './project-import.ts';
import { LABEL_COLUMNS, MEMBER_COLUMNS, MILESTONE_COLUMNS, pick, RecordError, sourceId } from './record-columns.ts';
import {
  findGroupExportById, insertRecord, isMember, readGroupRecords, replaceGroupExport, setGroupExportState, userRefs,
  usersByUsernameOrEmail,
} from './import-export.queries.ts';

export const GROUP_EXPORT_JOB = 'import_export.group_export';
export const GROUP_IMPORT_JOB = 'import_export.group_import';

export interface GroupExportPayload { exportId: number }
export interface GroupImportPayload { groupId: number; userId: number; file: string }

/** Subgroups an export walks at most (depth and count): a bound on the document. */
const MAX_GROUPS = 1000;

export async function requestGroupExport(db: Kysely<DB>, jobs: JobQueue, groupId: number, userId: number): Promise<GroupExportRow> {
  const row = await db.transaction().execute(async (trx) => {
    const made = await replaceGroupExport(trx, groupId, userId);
    await jobs.enqueue(GROUP_EXPORT_JOB, { exportId: made.id } satisfies GroupExportPayload, { trx });
    return made;
  });
  jobs.wake();
  return row;
}

export async function runGroupExport(db: Kysely<DB>, dataDir: string, payload: GroupExportPayload): Promise<void> {
  const row = await findGroupExportById(db, payload.exportId);
  if (!row || row.status === 'finished') return;
  const group = await findNamespaceById(db, row.group_id);
  if (!group) return;
  await setGroupExportState(db, row.id, { status: 'started' });
  const userIds = new Set<number>();
  let walked = 0;
  type Walked = { id: number; name: string; path: string; description: string; visibility_level: number };
  const node = async (g: Walked): Promise<GroupDocumentNode> => {
    walked += 1;
    const records = await readGroupRecords(db, g.id);
    for (const m of records.members) userIds.add(m.user_id as number);
    const subgroups: GroupDocumentNode[] = [];
    for (const child of records.children) if (walked < MAX_GROUPS) subgroups.push(await node(child));
    return {
      name: g.name, path: g.path, description: g.description, visibility_level: g.visibility_level,
      labels: records.labels, milestones: records.milestones, members: records.members, subgroups,
    };
  };
  const tree = await node(group);
  const users: Record<string, UserRef> = {};
  for (const u of await userRefs(db, [...userIds])) users[String(u.id)] = { username: u.username, email: u.email };
  const doc: GroupDocument = { version: FORMAT_VERSION, exported_at: nowIso(), users, group: tree };
  await fsp.mkdir(exportsDir(dataDir), { recursive: true, mode: 0o700 });
  const fileName = `group-${group.id}-${crypto.randomBytes(8).toString('hex')}.tar.gz`;
  await writeArchive(path.join(exportsDir(dataDir), fileName), [
    { name: 'VERSION', content: `${FORMAT_VERSION}\n` }, { name: 'group.json', content: JSON.stringify(doc) },
  ]);
  if (row.file_name) await fsp.rm(path.join(exportsDir(dataDir), path.basename(row.file_name)), { force: true });
  await setGroupExportState(db, row.id, { status: 'finished', file_name: fileName, error: null });
}

export async function groupExportGaveUp(db: Kysely<DB>, payload: GroupExportPayload, lastError: string): Promise<void> {
  await setGroupExportState(db, payload.exportId, { status: 'failed', error: lastError.slice(0, 1000) });
}

export async function queueGroupImport(jobs: JobQueue, payload: GroupImportPayload): Promise<void> {
  await jobs.enqueue(GROUP_IMPORT_JOB, payload);
}

/**
 * The import job. The group itself exists already; its records and subgroups are added. An
 * archive that is refused adds nothing (the group stays, empty, as the Service's does).
 */
export async function runGroupImport(
  db: Kysely<DB>, shards: StorageShard[], dataDir: string, payload: GroupImportPayload,
  log: (message: string) => void,
): Promise<void> {
  const file = path.join(importsDir(dataDir), path.basename(payload.file));
  const group = await findNamespaceById(db, payload.groupId);
  const importer = await db.selectFrom('users').selectAll().where('id', '=', payload.userId).executeTakeFirst();
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'kiln-group-import-'));
  try {
    if (!group || !importer) return;
    const found = await readArchive(file, work, { entries: GROUP_ENTRIES });
    if (!found.has('VERSION') || !found.has('group.json')) throw new RecordError('The archive is not a group export');
    if ((await fsp.readFile(path.join(work, 'VERSION'),
      'utf8')).trim() !== FORMAT_VERSION) throw new RecordError('The archive\'s version is not supported');
    let doc: GroupDocument;
    try {
      doc = JSON.parse(await fsp.readFile(path.join(work, 'group.json'), 'utf8')) as GroupDocument;
    } catch {
      throw new RecordError('The archive\'s group.json is not valid JSON');
    }
    if (typeof doc !== 'object' || doc === null || typeof doc.group !== 'object' || doc.group === null
      || typeof doc.users !== 'object' || doc.users === null) throw new RecordError('The archive\'s group.json is not a group');
    const people = await mapPeople(db, doc.users);
    let made = 0;
    const fill = async (target: NamespaceRow, node: GroupDocumentNode): Promise<void> => {
      made += 1;
      await writeGroupRecords(db, target, node, people, importer);
      if (!Array.isArray(node.subgroups)) return;
      for (const child of node.subgroups) {
        if (made >= MAX_GROUPS || typeof child !== 'object' || child === null) break;
        const parentPaths = (await namespacePaths(db, [target])).get(target.id)!;
        const created = await createGroup(db, shards, {
          creator: importer, name: String(child.name), path: String(child.path),
          description: typeof child.description === 'string' ? child.description : '',
          visibilityLevel: Math.min(Number(child.visibility_level) || 0, target.visibility_level),
          parent: { row: target, fullPath: parentPaths.fullPath },
        });
        if (!created.ok) {
          log(`group import: subgroup ${JSON.stringify(String(child.path).slice(0, 100))} not made: ${JSON.stringify(created.errors)}`);
          continue;
        }
        await fill(created.group, child);
      }
    };
    await fill(group, doc.group);
  } catch (err) {
    if (!(err instanceof ArchiveError || err instanceof RecordError)) throw err;
    log(`group import of ${payload.groupId} refused: ${err.message}`);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
  await fsp.rm(file, { force: true });
}

async function mapPeople(db: Kysely<DB>, users: Record<string, UserRef>): Promise<Map<number, number>> {
  const refs = Object.entries(users).slice(0, 100_000).filter(([, r]) => typeof r === 'object' && r !== null);
  const found = await usersByUsernameOrEmail(
    db, refs.map(([, r]) => String(r.username).slice(0, 255)), refs.map(([, r]) => String(r.email).slice(0, 255)),
  );
  const people = new Map<number, number>();
  for (const [id, ref] of refs) {
    const user = found.find((u) => u.username.toLowerCase() === String(ref.username).toLowerCase())
      ?? found.find((u) => u.email.toLowerCase() === String(ref.email).toLowerCase());
    if (user && /^\d+$/.test(id)) people.set(Number(id), user.id);
  }
  return people;
}

async function writeGroupRecords(
  db: Kysely<DB>, group: NamespaceRow, node: GroupDocumentNode, people: Map<number, number>, importer: UserRow,
): Promise<void> {
  const lists = (v: unknown) => (Array.isArray(v) ? v.filter((r): r is Record<string, unknown> => typeof r === 'object'
    && r !== null) : []);
  await db.transaction().execute(async (trx) => {
    for (const row of lists(node.labels)) {
      await insertRecord(trx, 'labels', { ...pick('labels', row, LABEL_COLUMNS), project_id: null, group_id: group.id });
    }
    for (const row of lists(node.milestones)) {
      await insertRecord(trx, 'milestones', { ...pick('milestones', row, MILESTONE_COLUMNS), project_id: null, group_id: group.id });
    }
    for (const row of lists(node.members)) {
      const source = sourceId('members', row, 'user_id');
      const user = source === null ? undefined : people.get(source);
      if (user === undefined || user === importer.id || await isMember(trx, 'Namespace', group.id, user)) continue;
      const m = pick('members', row, MEMBER_COLUMNS);
      if (![10, 20, 30, 40, 50].includes(Number(m.access_level))) continue;
      await insertMember(trx, {
        sourceType: 'Namespace', sourceId: group.id, userId: user, accessLevel: Number(m.access_level),
        expiresAt: m.expires_at as string | null, createdById: importer.id,
      });
    }
  });
}
