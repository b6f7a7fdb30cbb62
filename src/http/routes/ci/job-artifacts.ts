/**
 * The job artifacts API (the Service's lib/api/ci/job_artifacts.rb, 15.2): download a job's
 * archive, by job id or as the named job of a ref's latest successful pipeline; one file out of
 * the archive; keep; delete one job's artifacts or a whole project's.
 *
 * Reading takes read_build (public and internal projects to everyone who sees them, Reporter on
 * private ones) and accepts a job token, acting as the job's user; keeping takes update_build
 * (Developer); deleting takes destroy_artifacts (Maintainer). Expired artifacts are gone for
 * readers even before the background job removes their files (domain/jobs/job-artifacts.ts).
 * A job's `artifacts:access` (after 15.2; `public: false` is `developer`) narrows reading further:
 * `developer` asks update_build, `maintainer` admin_build, `none` lets no one download through
 * the API (403, as the Service's authorize_read_job_artifacts!); runners fetching a dependency's
 * artifacts use the runner protocol, which this does not touch.
 */
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import mime from 'mime-types';
import type { BuildRow } from '../../../db/tables/ci.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findArtifact, latestSuccessfulBuildForRef } from '../../../domain/jobs/jobs.queries.ts';
import { fileSize, readStream } from '../../../domain/jobs/job-files.ts';
import { isPlainEntryPath, openArchiveEntry } from '../../../domain/jobs/artifact-archive.ts';
import {
  artifactsReadAbility, deleteJobArtifacts, isLive, keepJobArtifacts, PROJECT_ARTIFACTS_DELETE_JOB,
} from '../../../domain/jobs/job-artifacts.ts';
import { nowIso } from '../../../domain/clock.ts';
import { badRequest, forbidden, recordNotFound } from '../../errors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { loadJobExtras } from '../../loaders/jobs.ts';
import { JobSchema, presentJob } from '../../entities/job.ts';
import { loadJob } from './jobs.ts';
import { route } from '../../route.ts';
import { contentDisposition } from '../../content-disposition.ts';

const jobToken = P.optional(P.string({ description: 'a CI job token, also accepted as the JOB-TOKEN header' }));
const byJobParams = defineParams({ id: P.string(), job_id: P.integer(), job_token: jobToken });
const byJobEntryParams = defineParams({
  id: P.string(), job_id: P.integer(),
  '*': P.string({ ownErrors: true, description: 'artifact_path: a file inside the archive' }),
  job_token: jobToken,
});
const byRefParams = defineParams({
  id: P.string(), ref_name: P.string({ description: 'branch or tag' }), job: P.string({ description: 'the job name' }), job_token: jobToken,
});
const byRefEntryParams = defineParams({
  id: P.string(), ref_name: P.string({ description: 'branch or tag' }), '*': P.string({
    ownErrors: true, description: 'artifact_path: a file inside the archive',
  }),
  job: P.string({ description: 'the job name' }), job_token: jobToken,
});
const projectParams = defineParams({ id: P.string() });

const MessageSchema = Type.Object({ message: Type.String() });
const binary = { description: 'the file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };

/** RFC 6266: a quoted ASCII fallback and the exact name in filename*. */
/** `..` segments or a NUL byte: the Service's Artifacts::Path#valid? refuses them with 400. */
function refusedPath(entryPath: string): boolean {
  return entryPath.includes('\0') || entryPath.split(/[/\\]/).includes('..');
}

const jobArtifacts: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const env = () => ciEnvFrom(db, config);

  /** The job's archive, live and on disk, or the Service's 404. */
  async function archiveOf(job: BuildRow): Promise<{ file: string; filename: string; size: number }> {
    const artifact = await findArtifact(db, job.id, 'archive');
    if (!isLive(artifact)) throw recordNotFound();
    const file = path.join(config.dataDir, artifact.file_path);
    const size = await fileSize(file);
    if (size === null) throw recordNotFound();
    return { file, filename: artifact.filename, size };
  }

  /** `artifacts:access` of the job, for the caller the project context stands for. */
  function checkAccess(ctx: ProjectContext, job: BuildRow): BuildRow {
    const ability = artifactsReadAbility(job);
    if (ability === null) return job;
    if (ability === 'none' || !canOnProject(ctx.actor, ability, ctx.project)) throw forbidden();
    return job;
  }

  async function sendArchive(reply: FastifyReply, job: BuildRow) {
    const archive = await archiveOf(job);
    reply.header('content-disposition', contentDisposition('attachment', archive.filename));
    reply.header('content-length', String(archive.size));
    reply.type('application/octet-stream');
    return reply.send(readStream(archive.file));
  }

  /** One entry of the job's archive, streamed with a type from its extension, as an attachment. */
  async function sendEntry(reply: FastifyReply, job: BuildRow, entryPath: string) {
    if (refusedPath(entryPath)) throw badRequest();
    const archive = await archiveOf(job);
    const entry = isPlainEntryPath(entryPath) ? await openArchiveEntry(archive.file, entryPath) : null;
    if (!entry) throw recordNotFound();
    const name = path.posix.basename(entryPath);
    reply.header('content-disposition', contentDisposition('attachment', name));
    reply.header('content-length', String(entry.size));
    reply.header('x-content-type-options', 'nosniff');
    reply.type(mime.lookup(name) || 'application/octet-stream');
    return reply.send(entry.stream);
  }

  /** The named job of the ref's latest successful pipeline, after read_build on the project. */
  async function jobForRef(request: FastifyRequest, input: { id: string; ref_name: string; job: string }): Promise<BuildRow> {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    // No ref or job could have such a name; nothing this long or with a NUL reaches the database.
    if (input.ref_name.length > 1024 || input.job.length > 255 || input.ref_name.includes('\0') || input.job.includes('\0')) {
      throw recordNotFound();
    }
    const job = await latestSuccessfulBuildForRef(db, ctx.project.id, input.ref_name, input.job);
    if (!job) throw recordNotFound();
    return checkAccess(ctx, job);
  }

  const tags = ['job artifacts'];
  const readConfig = { auth: 'optional' as const, jobToken: true };

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/:job_id/artifacts', ...readConfig, params: byJobParams,
    schema: { summary: "Download a job's artifacts archive", tags, produces: ['application/octet-stream'], response: { 200: binary } },
  }, async ({ request, reply, input }) => {
    const { ctx, job } = await loadJob(request, input, 'read_build');
    checkAccess(ctx, job);
    return sendArchive(reply, job);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/artifacts/:ref_name/download', ...readConfig, params: byRefParams,
    schema: {
      summary: "Download the artifacts archive of a job of a ref's latest successful pipeline", tags,
      produces: ['application/octet-stream'], response: { 200: binary },
    },
  }, async ({ request, reply, input }) => sendArchive(reply, await jobForRef(request, input)));

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/:job_id/artifacts/*', ...readConfig, params: byJobEntryParams,
    schema: {
      summary: "One file out of a job's artifacts archive", tags, produces: ['application/octet-stream'],
      response: { 200: binary },
    },
  }, async ({ request, reply, input }) => {
    const { ctx, job } = await loadJob(request, input, 'read_build');
    checkAccess(ctx, job);
    return sendEntry(reply, job, input['*']);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/jobs/artifacts/:ref_name/raw/*', ...readConfig, params: byRefEntryParams,
    schema: {
      summary: "One file out of the artifacts of a job of a ref's latest successful pipeline", tags,
      produces: ['application/octet-stream'], response: { 200: binary },
    },
  }, async ({ request, reply, input }) => sendEntry(reply, await jobForRef(request, input), input['*']));

  route(app, {
    method: 'POST', url: '/projects/:id/jobs/:job_id/artifacts/keep', auth: 'required', params: byJobParams,
    schema: { summary: "Keep a job's artifacts: they no longer expire", tags, response: { 200: JobSchema } },
  }, async ({ request, reply, input }) => {
    const { job } = await loadJob(request, input, 'update_build');
    if (!isLive(await findArtifact(db, job.id, 'archive'))) throw recordNotFound();
    await keepJobArtifacts(env(), job);
    const kept = (await loadJob(request, input, 'update_build')).job;
    return reply.code(200).send(presentJob(kept, await loadJobExtras(db, config.externalUrl, [kept])));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/jobs/:job_id/artifacts', auth: 'required', params: byJobParams,
    schema: { summary: "Delete a job's artifacts (the log stays)", tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const { job } = await loadJob(request, input, 'admin_build');
    await deleteJobArtifacts(env(), job);
    return reply.code(204).send();
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/artifacts', auth: 'required', params: projectParams,
    schema: { summary: "Delete every artifact of a project, in the background (202)", tags, response: { 202: MessageSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_build');
    await app.jobs.enqueue(PROJECT_ARTIFACTS_DELETE_JOB, { projectId: ctx.project.id, before: nowIso() });
    // accepted! (the Service's helpers): the deletion runs after the response.
    return reply.code(202).send({ message: '202 Accepted' });
  });
};

export default jobArtifacts;
