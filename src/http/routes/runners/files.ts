/**
 * Job logs and artifacts over the runner protocol (lib/api/ci/runner.rb): appending to the log
 * with Content-Range (202 with the new Range; 416 with the current one when the append does not
 * start where the log ends), uploading artifacts as multipart (archive, metadata, junit) and
 * downloading them. Bodies stream straight to and from files under KILN_DATA_DIR.
 */
import { scheduleStatisticsRefresh } from '../../../domain/statistics/project-statistics.ts';
import type { FastifyPluginAsync } from 'fastify';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { parseDuration } from '../../../domain/ci-config/duration.ts';
import {
  findArtifact, findJob, insertArtifact, reserveTraceRange, setTraceSizeFrom, updateJob,
} from '../../../domain/jobs/jobs.queries.ts';
import {
  artifactRelPath, fileSize, readStream, removeFile, TooLarge, traceRelPath, writeFileFromStream,
  writeStreamAt,
} from '../../../domain/jobs/job-files.ts';
import { ARTIFACTS_EXPIRE_JOB, isLive } from '../../../domain/jobs/job-artifacts.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { ApiError, badRequest, forbidden, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authenticateJob, authenticatingJob, jobTokenOf } from '../../runner-auth.ts';
import { isMultipart, multipartParts } from '../../input/multipart.ts';
import { route } from '../../route.ts';

/** The Service's default limits: 100 MB of log per job, 100 MB per artifact. */
const MAX_TRACE_BYTES = 100 * 1024 * 1024;
const MAX_ARTIFACT_BYTES = 100 * 1024 * 1024;
/** Artifacts without expire_in keep the instance default of 30 days. */
const DEFAULT_EXPIRE_SECONDS = 30 * 86_400;

const ARTIFACT_TYPES = ['archive', 'metadata', 'junit'] as const;
const ARTIFACT_FORMATS = ['zip', 'gzip', 'raw'] as const;
/** The names the Service gives stored artifacts of each type. */
const DEFAULT_FILENAMES: Record<string, string> = { archive: 'artifacts.zip', metadata: 'metadata.gz', junit: 'junit.xml.gz' };

const traceParams = defineParams({ id: P.integer(), token: P.optional(P.string()) });
const uploadParams = defineParams({
  id: P.integer(),
  token: P.optional(P.string()),
  artifact_type: P.optional(P.oneOf(ARTIFACT_TYPES, { default: 'archive' })),
  artifact_format: P.optional(P.oneOf(ARTIFACT_FORMATS, { default: 'zip' })),
  expire_in: P.optional(P.string({ description: 'e.g. "1 week"; "never"' })),
});
const downloadParams = defineParams({
  id: P.integer(), token: P.optional(P.string()),
  artifact_type: P.optional(P.oneOf(ARTIFACT_TYPES, { default: 'archive' })),
});

/** "start-end" (end inclusive), as gitlab-runner sends Content-Range on log appends. */
function parseContentRange(value: string): { start: number; end: number } | null {
  const m = /^(?:bytes\s+)?(\d+)-(\d+)(?:\/\d+|\/\*)?$/.exec(value.trim());
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  return end >= start ? { start, end } : null;
}

/**
 * expire_at for an upload's expire_in: the instance default of 30 days when absent or not a
 * duration, none for "never" or a time past what a timestamp can hold.
 */
function expiryOf(expireIn: string | undefined): string | null {
  const parsed = expireIn === undefined ? undefined : parseDuration(expireIn);
  if (parsed === null) return null;
  const at = Date.now() + (parsed ?? DEFAULT_EXPIRE_SECONDS) * 1000;
  return at <= MAX_TIME ? new Date(at).toISOString() : null;
}
/** 9999-12-31T23:59:59Z: later expiries are as good as never. */
const MAX_TIME = 253_402_300_799_000;

const grapeError = (status: number, text: string, headers: Record<string, string> = {}) => new ApiError(status, { error: text }, headers);

const runnerFiles: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  // Log appends: the body reaches the handler as the raw request stream, whatever its type.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    route(scope, {
      method: 'PATCH', url: '/jobs/:id/trace', auth: 'optional', params: traceParams,
      schema: { summary: "Append to a job's log (Content-Range)", tags: ['runner protocol'] },
    }, async ({ request, reply, input }) => {
      const job = await authenticateJob(request, input.id, jobTokenOf(request, input));
      const header = request.headers['content-range'];
      if (typeof header !== 'string') throw grapeError(400, '400 Missing header Content-Range');
      const range = parseContentRange(header);
      const length = range ? range.end - range.start + 1 : 0;
      if (!range || range.end + 1 > MAX_TRACE_BYTES) throw grapeError(416, '416 Range Not Satisfiable', { range: `0-${job.trace_size}` });
      // Claim the range first: only an append starting where the log ends may write.
      if (!await reserveTraceRange(db, job.id, range.start, range.start + length)) {
        const current = (await findJob(db, job.id))!;
        throw grapeError(416, '416 Range Not Satisfiable', { range: `0-${current.trace_size}` });
      }
      const file = path.join(config.dataDir, traceRelPath(job));
      let written: number;
      try {
        written = await writeStreamAt(file, range.start, request.body as Readable, length);
      } catch (err) {
        await setTraceSizeFrom(db, job.id, range.start + length, range.start);
        if (err instanceof TooLarge) throw grapeError(416, '416 Range Not Satisfiable', { range: `0-${range.start}` });
        throw err;
      }
      // A body shorter than its Content-Range: the log ends where the bytes did.
      if (written !== length) await setTraceSizeFrom(db, job.id, range.start + length, range.start + written);
      reply.header('job-status', job.status);
      reply.header('range', `0-${range.start + written}`);
      return reply.code(202).send();
    });
  });

  route(app, {
    method: 'POST', url: '/jobs/:id/artifacts', auth: 'optional', params: uploadParams, multipart: 'stream',
    schema: { summary: 'Upload job artifacts (multipart: file, and metadata for archives)', tags: ['runner protocol'] },
  }, async ({ request, reply, input }) => {
    const job = await authenticateJob(request, input.id, jobTokenOf(request, input));
    if (!isMultipart(request)) throw badRequest('"file" not given');
    if (await findArtifact(db, job.id, input.artifact_type)) {
      throw badRequest('another artifact of the same type already exists');
    }
    const stored: { type: string; format: string; filename: string; size: number; rel: string }[] = [];
    // expire_in may come in the query or as a multipart field, before or after the file.
    let fieldExpireIn: string | undefined;
    try {
      for await (const part of multipartParts(request.raw, request.headers, { fileSize: MAX_ARTIFACT_BYTES, files: 2, fields: 20 })) {
        if (part.type !== 'file') {
          if (part.fieldname === 'expire_in' && part.value.length <= 100 && !part.value.includes('\0')) fieldExpireIn = part.value;
          continue;
        }
        const type = part.fieldname === 'metadata' ? 'metadata' : part.fieldname === 'file' ? input.artifact_type : null;
        if (!type) {
          part.file.resume();
          continue;
        }
        const rel = artifactRelPath(job, type);
        const size = await writeFileFromStream(path.join(config.dataDir, rel), part.file, MAX_ARTIFACT_BYTES);
        if (part.file.truncated) throw new TooLarge();
        stored.push({
          type, format: type === 'metadata' ? 'gzip' : input.artifact_format,
          filename: part.filename || DEFAULT_FILENAMES[type], size, rel,
        });
      }
    } catch (err) {
      for (const s of stored) await removeFile(path.join(config.dataDir, s.rel));
      const status = (err as { statusCode?: number }).statusCode;
      if (err instanceof TooLarge || status === 413) throw new ApiError(413, { message: '413 Request Entity Too Large' });
      throw err;
    }
    if (!stored.some((s) => s.type === input.artifact_type)) throw badRequest('"file" not given');
    const expireAt = expiryOf(input.expire_in ?? fieldExpireIn);
    await db.transaction().execute(async (trx) => {
      for (const s of stored) {
        await insertArtifact(trx, {
          job_id: job.id, project_id: job.project_id, file_type: s.type, file_format: s.format, filename: s.filename,
          size: s.size, file_path: s.rel, expire_at: expireAt,
        });
      }
      if (input.artifact_type === 'archive') await updateJob(trx, job.id, { artifacts_expire_at: expireAt });
      // The removal is due when the artifacts expire (domain/jobs/job-artifacts.ts).
      if (expireAt !== null) await app.jobs.enqueue(ARTIFACTS_EXPIRE_JOB, { jobId: job.id }, { trx, runAt: new Date(expireAt) });
    });
    // The project's job artifacts size grows (the Service refreshes it after an upload).
    await scheduleStatisticsRefresh(db, job.project_id);
    // created! (reference §6.1)
    return reply.code(201).send({ message: '201 Created' });
  });

  route(app, {
    method: 'GET', url: '/jobs/:id/artifacts', auth: 'optional', params: downloadParams,
    schema: { summary: "Download a job's artifacts with a running job's token", tags: ['runner protocol'] },
  }, async ({ request, reply, input }) => {
    const caller = await authenticatingJob(request, jobTokenOf(request, input));
    const job = await findJob(db, input.id);
    if (!job) throw forbidden();
    // The running job's user must be allowed to read the other job's builds (authenticate_job_via_dependent_job!).
    const project = await findProjectById(db, job.project_id);
    const user = caller.user_id === null ? undefined : await findUserById(db, caller.user_id);
    if (!project || !user) throw forbidden();
    const lineage = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!.lineage;
    if (!canOnProject(await projectActor(db, user, project.id, lineage), 'read_build', project)) throw forbidden();
    const artifact = await findArtifact(db, job.id, input.artifact_type);
    // An expired artifact is gone for readers even before the background job removes its file.
    const file = isLive(artifact) ? path.join(config.dataDir, artifact.file_path) : null;
    if (!artifact || !file || await fileSize(file) === null) throw notFound();
    reply.header('content-disposition', `attachment; filename="${artifact.filename.replace(/["\\\r\n]/g, '_')}"`);
    reply.header('content-length', String(artifact.size));
    reply.type('application/octet-stream');
    return reply.send(readStream(file));
  });
};

export default runnerFiles;
