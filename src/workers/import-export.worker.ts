/** The import and export jobs: archives are made and read outside the requests (domain/import-export/). */
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import {
  PROJECT_EXPORT_JOB, projectExportGaveUp, runProjectExport, type ProjectExportPayload,
} from '../domain/import-export/project-export.ts';
import {
  PROJECT_IMPORT_JOB, projectImportGaveUp, runProjectImport, type ProjectImportPayload,
} from '../domain/import-export/project-import.ts';
import {
  GROUP_EXPORT_JOB, GROUP_IMPORT_JOB, groupExportGaveUp, runGroupExport, runGroupImport, type GroupExportPayload, type GroupImportPayload,
} from '../domain/import-export/group-export-import.ts';

export function registerImportExportJobs(
  queue: JobQueue, deps: { db: Kysely<DB>; shards: StorageShard[]; dataDir: string; log: FastifyBaseLogger },
): void {
  const { db, shards, dataDir } = deps;
  queue.registerHandler(PROJECT_EXPORT_JOB, (p: ProjectExportPayload) => runProjectExport(db, shards, dataDir, p), {
    maxAttempts: 3, onGiveUp: (p: ProjectExportPayload, lastError: string) => projectExportGaveUp(db, p, lastError),
  });
  queue.registerHandler(PROJECT_IMPORT_JOB, (p: ProjectImportPayload) => runProjectImport(db, queue, shards, dataDir, p), {
    maxAttempts: 3,
    onGiveUp: (p: ProjectImportPayload, lastError: string) => projectImportGaveUp(db, queue, shards, dataDir, p, lastError),
  });
  queue.registerHandler(GROUP_EXPORT_JOB, (p: GroupExportPayload) => runGroupExport(db, dataDir, p), {
    maxAttempts: 3, onGiveUp: (p: GroupExportPayload, lastError: string) => groupExportGaveUp(db, p, lastError),
  });
  queue.registerHandler(GROUP_IMPORT_JOB, (p: GroupImportPayload) => runGroupImport(db, shards, dataDir, p, (m) => deps.log.warn(m)), {
    maxAttempts: 3,
  });
}
