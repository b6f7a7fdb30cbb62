/**
 * Generic packages (the Service's Packages::Generic::CreatePackageFileService and
 * FindOrCreatePackageService, 15.2): an upload is streamed to a file under
 * KILN_DATA_DIR/packages/<project id>/ while its SHA-256 is taken (the Service's Workhorse does the
 * same), then the package of that name and version is found or made, its status set when the upload
 * names one, and the file row added, in one transaction. A file name may repeat within a package:
 * duplicates are allowed by default (Namespace::PackageSetting generic_duplicates_allowed), and a
 * download takes the newest.
 *
 * md5 and sha1 stay empty for generic files, as the Service keeps them (only the SHA-256 is passed
 * to Packages::CreatePackageFileService for this type). The size is kept on the file row.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PackageFileRow, PackageRow } from '../../db/tables/packages.ts';
import { nowIso } from '../clock.ts';
import { TooLarge } from '../jobs/job-files.ts';
import { statusValue, type PackageStatus } from './package-names.ts';
import {
  allPackageFiles, deletePackageFileRow, deletePackageRow, findOrInsertPackage, insertPackageFile, updatePackage,
} from './packages.queries.ts';

export { TooLarge };

/** The Service's default plan limit of generic_packages_max_file_size: 5 GiB. */
export const DEFAULT_GENERIC_MAX_FILE_SIZE = 5 * 1024 * 1024 * 1024;

export interface StoredUpload {
  /** Relative to the data directory. */
  relPath: string;
  size: number;
  sha256: string;
}

/**
 * Streams `source` to a new file of the project's package store, counting and hashing on the way;
 * past `max` bytes the stream stops with TooLarge and nothing is left behind.
 */
export async function storeUpload(dataDir: string, projectId: number, source: Readable, max: number): Promise<StoredUpload> {
  const relPath = path.join('packages', String(projectId), `${Date.now().toString(36)}-${crypto.randomBytes(12).toString('hex')}`);
  const absPath = path.join(dataDir, relPath);
  await fsp.mkdir(path.dirname(absPath), { recursive: true });
  const hash = crypto.createHash('sha256');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) return done(new TooLarge(`more than ${max} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, counter, fs.createWriteStream(absPath, { flags: 'wx' }));
  } catch (err) {
    await fsp.rm(absPath, { force: true });
    throw err;
  }
  return { relPath, size, sha256: hash.digest('hex') };
}

export async function removeStoredFile(dataDir: string, relPath: string): Promise<void> {
  await fsp.rm(path.join(dataDir, relPath), { force: true });
}

export interface GenericUpload {
  projectId: number;
  name: string;
  version: string;
  fileName: string;
  status?: PackageStatus;
  /** The user behind the upload; null for a deploy token (the Service's package_creator). */
  creatorId: number | null;
  /** The pipeline of the job whose token uploads (the package's build info). */
  pipelineId: number | null;
  stored: StoredUpload;
}

/** Records a stored upload; the file is removed again when the rows cannot be written. */
export async function createGenericPackageFile(
  db: Kysely<DB>, dataDir: string, u: GenericUpload,
): Promise<{ pkg: PackageRow; file: PackageFileRow }> {
  try {
    return await db.transaction().execute(async (trx) => {
      const now = nowIso();
      const { row, created } = await findOrInsertPackage(trx, {
        project_id: u.projectId, name: u.name, version: u.version, package_type: 'generic',
        status: statusValue(u.status ?? 'default'), creator_id: u.creatorId, pipeline_id: u.pipelineId, created_at: now, updated_at: now,
      });
      let pkg = row;
      if (!created && u.status !== undefined && statusValue(u.status) !== row.status) {
        await updatePackage(trx, row.id, { status: statusValue(u.status), updated_at: now });
        pkg = { ...row, status: statusValue(u.status), updated_at: now };
      }
      const file = await insertPackageFile(trx, {
        package_id: pkg.id, project_id: u.projectId, file_name: u.fileName, size: u.stored.size, file_path: u.stored.relPath,
        file_md5: null, file_sha1: null, file_sha256: u.stored.sha256, pipeline_id: u.pipelineId, created_at: now, updated_at: now,
      });
      return { pkg, file };
    });
  } catch (err) {
    await removeStoredFile(dataDir, u.stored.relPath);
    throw err;
  }
}

/** Removes a package with its files: the rows first (readers stop finding them), then the files. */
export async function deletePackage(db: Kysely<DB>, dataDir: string, pkg: PackageRow): Promise<void> {
  const files = await db.transaction().execute(async (trx) => {
    const rows = await allPackageFiles(trx, pkg.id);
    await deletePackageRow(trx, pkg.id);
    return rows;
  });
  for (const f of files) await removeStoredFile(dataDir, f.file_path);
}

export async function deletePackageFile(db: Kysely<DB>, dataDir: string, file: PackageFileRow): Promise<void> {
  await deletePackageFileRow(db, file.id);
  await removeStoredFile(dataDir, file.file_path);
}
