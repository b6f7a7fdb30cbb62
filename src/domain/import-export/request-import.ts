/**
 * The request side of an import (the Service's Import::GitlabProjects::CreateProjectService):
 * the uploaded archive is kept under `<data dir>/imports/` with a name of our own, the project is
 * created (name and path validated as any project's) with `import_status: scheduled` and
 * `import_type: gitlab_project`, and the job is queued (project-import.ts). With `overwrite`, a
 * project at the same path is deleted first (Projects::OverwriteProjectService).
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { createProject, type CreateProjectResult } from '../projects/create-project.ts';
import { deleteProject } from '../projects/delete-project.ts';
import { importsDir, PROJECT_IMPORT_JOB, type ProjectImportPayload } from './project-import.ts';
import { findProjectInNamespaceByPath } from './import-export.queries.ts';

export async function storeImportFile(dataDir: string, data: Buffer): Promise<string> {
  await fsp.mkdir(importsDir(dataDir), { recursive: true, mode: 0o700 });
  const name = `import-${crypto.randomBytes(12).toString('hex')}.tar.gz`;
  await fsp.writeFile(path.join(importsDir(dataDir), name), data, { mode: 0o600 });
  return name;
}

export async function requestProjectImport(
  db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], dataDir: string,
  o: {
    creator: UserRow; namespace: NamespaceRow; namespaceFullPath: string; name: string; path: string; overwrite: boolean;
    overrides: Record<string, unknown>; file: Buffer;
  },
): Promise<CreateProjectResult> {
  if (o.overwrite) {
    const existing = await findProjectInNamespaceByPath(db, o.namespace.id, o.path);
    if (existing) {
      const deleted = await deleteProject(db, jobs, shards, existing.id);
      if (!deleted.ok) return { ok: false, errors: { base: ['The project to overwrite cannot be deleted now'] } };
    }
  }
  const fileName = await storeImportFile(dataDir, o.file);
  const visibility = typeof o.overrides.visibility_level === 'number' ? o.overrides.visibility_level : 0;
  const result = await createProject(db, shards, {
    creator: o.creator, namespace: o.namespace, namespaceFullPath: o.namespaceFullPath, name: o.name, path: o.path,
    description: typeof o.overrides.description === 'string' ? o.overrides.description : null,
    visibilityLevel: visibility, defaultBranch: null, initializeWithReadme: false,
    attributes: { import_status: 'scheduled', import_type: 'gitlab_project' },
  });
  if (!result.ok) {
    await fsp.rm(path.join(importsDir(dataDir), fileName), { force: true });
    return result;
  }
  await jobs.enqueue(PROJECT_IMPORT_JOB, {
    projectId: result.project.id, userId: o.creator.id, file: fileName, overrides: o.overrides,
  } satisfies ProjectImportPayload);
  jobs.wake();
  return result;
}
