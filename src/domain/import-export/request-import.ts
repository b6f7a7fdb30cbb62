/**
 * The request side of an import (the Service's Import::GitlabProjects::CreateProjectService):
 * the uploaded archive is kept under `<data dir>/imports/` with a name of our own, the project is
 * created (name and path validated as any project's) with `import_status: scheduled` and
 * `import_type: gitlab_project`, and the job is queued (project-import.ts). With `overwrite` and
 * a project at the path, the import is made beside it and only a complete import takes its place
 * (overwrite-project.ts): until then the old project stays as it is.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { createProject, type CreateProjectResult } from '../projects/create-project.ts';
import { takenInNamespace } from '../projects/projects.queries.ts';
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
  // GitlabProjectsImportService#prepare_import_params: with overwrite and a project at the path,
  // the import goes to `<path>-<random hex>` and remembers the path it is meant for; the swap
  // gives it the overwritten project's name and path (overwrite-project.ts). Names are unique in
  // a namespace here, so a name in use (the overwritten project's, usually) takes the suffix too
  // while the two live side by side.
  let place = { name: o.name, path: o.path };
  let originalPath: string | undefined;
  if (o.overwrite && await findProjectInNamespaceByPath(db, o.namespace.id, o.path)) {
    const suffix = crypto.randomBytes(16).toString('hex');
    const tempPath = `${o.path}-${suffix}`;
    const nameTaken = (await takenInNamespace(db, o.namespace.id, o.name, tempPath)).name;
    // Within the 255 characters of a name; the path's length is checked as any path's.
    place = { name: nameTaken ? `${Array.from(o.name).slice(0, 200).join('')}-${suffix}` : o.name, path: tempPath };
    originalPath = o.path;
  }
  const fileName = await storeImportFile(dataDir, o.file);
  const visibility = typeof o.overrides.visibility_level === 'number' ? o.overrides.visibility_level : 0;
  const result = await createProject(db, shards, {
    creator: o.creator, namespace: o.namespace, namespaceFullPath: o.namespaceFullPath, ...place,
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
    ...(originalPath !== undefined ? { originalPath } : {}),
  } satisfies ProjectImportPayload);
  jobs.wake();
  return result;
}
