/**
 * Markdown attachments of a project (the Service's UploadService with FileUploader): the file is
 * kept under KILN_DATA_DIR/uploads/project/<project id>/<secret>/<filename>, with a random
 * 32-hex secret (FileUploader.generate_secret) so the URL cannot be guessed, and recorded in
 * project_uploads. Its URL in Markdown is `/uploads/<secret>/<filename>` (relative to the
 * project); it is served at `/<namespace>/<project>/uploads/<secret>/<filename>`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UploadedFile } from '../uploaded-file.ts';
import type { ProjectUploadRow } from '../../db/tables/uploads.ts';
import { nowIso } from '../clock.ts';
import { insertProjectUpload } from './uploads.queries.ts';

/** CarrierWave's longest kept file name (the file system's NAME_MAX). */
const MAX_FILENAME_BYTES = 255;

export const UPLOAD_SECRET = /^[0-9a-f]{32}$/;

/**
 * CarrierWave::SanitizedFile#sanitize: the base name only, every character but letters, digits,
 * `.`, `_`, `-` and `+` made `_`; a name that would be hidden or empty gets a leading `_`.
 */
export function sanitizeUploadName(filename: string): string {
  let name = path.basename(filename.replace(/\\/g, '/')).replace(/[^\p{L}\p{N}._+-]/gu, '_');
  if (name === '' || /^\.+$/.test(name)) name = `_${name}`;
  while (Buffer.byteLength(name) > MAX_FILENAME_BYTES) {
    const ext = path.extname(name);
    const base = path.basename(name, ext);
    name = base.length > 1 ? base.slice(0, -1) + ext : name.slice(0, -1);
  }
  return name;
}

export function projectUploadsDir(dataDir: string, projectId: number): string {
  return path.join(dataDir, 'uploads', 'project', String(projectId));
}

/** Stores the file and records it; the row says where it is. */
export async function storeProjectUpload(
  db: Kysely<DB>, dataDir: string, o: { projectId: number; userId: number; file: UploadedFile },
): Promise<ProjectUploadRow> {
  const secret = crypto.randomBytes(16).toString('hex');
  const filename = sanitizeUploadName(o.file.filename);
  const dir = path.join(projectUploadsDir(dataDir, o.projectId), secret);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, filename), o.file.data);
  try {
    return await insertProjectUpload(db, {
      project_id: o.projectId, secret, filename, size: o.file.data.length, uploaded_by_id: o.userId, created_at: nowIso(),
    });
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The stored file of a recorded upload, or null when it is gone from disk. */
export async function readProjectUpload(dataDir: string, row: ProjectUploadRow): Promise<Buffer | null> {
  try {
    return await fs.readFile(path.join(projectUploadsDir(dataDir, row.project_id), row.secret, row.filename));
  } catch {
    return null;
  }
}

/** A deleted project's files (its rows went with it). */
export async function removeProjectUploads(dataDir: string, projectId: number): Promise<void> {
  await fs.rm(projectUploadsDir(dataDir, projectId), { recursive: true, force: true });
}
