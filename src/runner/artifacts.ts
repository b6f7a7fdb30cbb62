/**
 * Artifacts over the runner protocol: the archives of `dependencies`/`needs` jobs downloaded and
 * extracted into the project directory before the script (download_artifacts stage), and the
 * job's own `artifacts` uploaded after it (upload_artifacts_on_success / _on_failure): archive as
 * zip with the metadata file beside it, reports such as junit as gzip, each honouring `when`,
 * `name`, `exclude` and `expire_in`.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { downloadArtifact, uploadArtifact } from './api.ts';
import { collectFiles, extractZip, writeGzip, writeMetadata, writeZip } from './archive.ts';
import { StageError } from './git.ts';
import type { ArtifactSpec, JobResponse } from './job-response.ts';

export async function downloadDependencies(o: {
  base: string; job: JobResponse; projectDir: string; tmpDir: string; notice: (t: string) => void;
}): Promise<void> {
  for (const dep of o.job.dependencies ?? []) {
    if (!dep.artifacts_file) continue;
    o.notice(`Downloading artifacts for ${dep.name} (${dep.id})...`);
    const file = path.join(o.tmpDir, `dependency-${dep.id}.zip`);
    try {
      await downloadArtifact(o.base, dep.id, dep.token || o.job.token, file);
      await extractZip(file, o.projectDir);
    } catch (err) {
      throw new StageError(`downloading artifacts from coordinator... ${(err as Error).message}`);
    } finally {
      await fsp.rm(file, { force: true });
    }
    o.notice(`Downloading artifacts from coordinator... ok        id=${dep.id}`);
  }
}

function wanted(a: ArtifactSpec, success: boolean): boolean {
  const when = a.when || 'on_success';
  return when === 'always' || (when === 'on_success' ? success : !success);
}

/** Uploads what `success` calls for; returns false when an upload failed (the job then fails). */
export async function uploadArtifacts(o: {
  base: string; job: JobResponse; success: boolean; projectDir: string; tmpDir: string;
  notice: (t: string) => void; warn: (t: string) => void; error: (t: string) => void;
}): Promise<boolean> {
  let ok = true;
  for (const [i, a] of (o.job.artifacts ?? []).entries()) {
    if (!wanted(a, o.success)) continue;
    const type = a.artifact_type || 'archive';
    const format = a.artifact_format || (type === 'archive' ? 'zip' : 'gzip');
    o.notice(`Uploading artifacts...`);
    const files = (await collectFiles(o.projectDir, { paths: a.paths, untracked: a.untracked, exclude: a.exclude }, o.warn))
      .filter((f) => format === 'zip' || !f.endsWith('/'));
    if (files.length === 0) {
      o.error('No files to upload');
      continue;
    }
    const file = path.join(o.tmpDir, `artifact-${i}.${format === 'zip' ? 'zip' : format === 'gzip' ? 'gz' : 'raw'}`);
    try {
      let metadata: { file: string; filename: string } | undefined;
      if (format === 'zip') {
        await writeZip(o.projectDir, files, file);
        if (type === 'archive') {
          metadata = { file: `${file}.meta.gz`, filename: 'metadata.gz' };
          await writeMetadata(file, metadata.file);
        }
      } else if (format === 'gzip') {
        await writeGzip(o.projectDir, files, file);
      } else {
        await fsp.copyFile(path.join(o.projectDir, files[0]), file);
      }
      const baseName = type === 'archive' ? `${a.name || 'artifacts'}.zip` : `${a.name || type}${format === 'gzip' ? '.gz' : ''}`;
      await uploadArtifact(o.base, o.job.id, o.job.token, {
        file, filename: baseName.replace(/[/\\\0]/g, '_'), artifactType: type, artifactFormat: format, expireIn: a.expire_in, metadata,
      });
      o.notice(`Uploading artifacts as "${type}" to coordinator... 201 Created  id=${o.job.id} responseStatus=201 Created`);
    } catch (err) {
      o.error(`Uploading artifacts as "${type}" to coordinator... ${(err as Error).message}`);
      ok = false;
    } finally {
      await fsp.rm(file, { force: true });
      await fsp.rm(`${file}.meta.gz`, { force: true });
    }
  }
  return ok;
}
