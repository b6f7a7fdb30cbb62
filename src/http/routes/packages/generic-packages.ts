/**
 * Generic packages (the Service's lib/api/generic_packages.rb, 15.2):
 * `PUT /projects/:id/packages/generic/:package_name/:package_version/:file_name` takes the request
 * body as the file (the Service's Workhorse does the same), streamed to disk and hashed on the way,
 * never held in memory; `status` (default, hidden) sets the package's status; `select=package_file`
 * answers the PackageFile entity (200) instead of `201 Created`. GET streams the newest file of
 * that name of an installable (default or hidden) package, as an attachment.
 *
 * Names and versions follow Gitlab::Regex (domain/packages/package-names.ts); the route's
 * parameters are checked before the project is looked up, as Grape validates before the handler.
 * Authentication: package-access.ts. The largest file is the instance's
 * generic_packages_max_file_size (413 past it, as Workhorse refuses a body above the authorized
 * maximum size).
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { findJob } from '../../../domain/jobs/jobs.queries.ts';
import { fileSize, readStream } from '../../../domain/jobs/job-files.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import {
  createGenericPackageFile, DEFAULT_GENERIC_MAX_FILE_SIZE, storeUpload, TooLarge,
} from '../../../domain/packages/generic-packages.ts';
import {
  INSTALLABLE_STATUSES, isTraversal, validGenericPackageFileName, validGenericPackageName, validGenericPackageVersion,
} from '../../../domain/packages/package-names.ts';
import { findPackageByNameVersion, latestPackageFile } from '../../../domain/packages/packages.queries.ts';
import { ApiError, invalidParams, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadPackagePipelines, PackageFileSchema, presentPackageFile } from '../../entities/package.ts';
import { route } from '../../route.ts';
import { loadPackageProject, packageCredentials } from './package-access.ts';
import { contentDisposition } from '../../content-disposition.ts';

const jobToken = P.optional(P.string({ maxLength: 255, description: 'a CI job token, also accepted as the JOB-TOKEN header' }));
const pathParams = {
  id: P.string(),
  package_name: P.string({ ownErrors: true, description: 'the package name' }),
  '*': P.string({ ownErrors: true, description: 'package_version/file_name' }),
};
const uploadParams = defineParams({
  ...pathParams,
  status: P.optional(P.oneOf(['default', 'hidden'] as const, { description: 'the package status' })),
  select: P.optional(P.oneOf(['package_file'] as const, { description: 'answer the created package file' })),
  job_token: jobToken,
});
const downloadParams = defineParams({ ...pathParams, job_token: jobToken });

const MessageSchema = Type.Object({ message: Type.String() });
const binary = { description: 'the file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };

/** RFC 6266: a quoted ASCII fallback and the exact name in filename*. */
/**
 * The route's parameters as Grape checks them: the version is everything between the name and the
 * last segment (`*package_version`), the file name the last segment.
 */
function coordinates(input: { package_name: string; '*': string }): { name: string; version: string; fileName: string } {
  const rest = input['*'];
  const slash = rest.lastIndexOf('/');
  const version = slash < 0 ? '' : rest.slice(0, slash);
  const fileName = slash < 0 ? rest : rest.slice(slash + 1);
  if (version === '') throw new ApiError(400, { message: '400 Bad request - "package_version" not given' });
  if (fileName === '') throw new ApiError(400, { message: '400 Bad request - "file_name" not given' });
  if (!validGenericPackageName(input.package_name)) throw invalidParams(['package_name is invalid']);
  if (isTraversal(input.package_name)) throw invalidParams(['package_name should be a valid file path']);
  if (!validGenericPackageVersion(version)) throw invalidParams(['package_version is invalid']);
  if (!validGenericPackageFileName(fileName)) throw invalidParams(['file_name is invalid']);
  if (isTraversal(fileName)) throw invalidParams(['file_name should be a valid file path']);
  return { name: input.package_name, version, fileName };
}

const genericPackages: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['generic packages'];
  const url = '/projects/:id/packages/generic/:package_name/*';

  await app.register(async (scope) => {
    // The body is the file, whatever its type: the handler reads it as the raw request stream.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    route(scope, {
      method: 'PUT', url, auth: 'optional', jobToken: true, params: uploadParams, preValidation: packageCredentials,
      schema: {
        summary: 'Upload a file into a generic package (the request body is the file)', tags,
        response: { 201: MessageSchema, 200: PackageFileSchema },
      },
    }, async ({ request, reply, input, caller }) => {
      const c = coordinates(input);
      const ctx = await loadPackageProject(request, input.id, 'create_package');
      const settings = await currentSettings(db);
      const max = settings.generic_packages_max_file_size ?? DEFAULT_GENERIC_MAX_FILE_SIZE;
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) throw new ApiError(413, { message: '413 Request Entity Too Large' });
      const body = request.body as Readable | undefined;
      let stored;
      try {
        stored = await storeUpload(config.dataDir, ctx.project.id, body && typeof body.pipe === 'function' ? body : emptyStream(), max);
      } catch (err) {
        if (err instanceof TooLarge) throw new ApiError(413, { message: '413 Request Entity Too Large' });
        throw err;
      }
      // A job's token records the job's pipeline on the package and the file (build infos).
      const jobId = caller?.credential.kind === 'job_token' ? caller.credential.jobId : undefined;
      const job = jobId === undefined ? undefined : await findJob(db, jobId);
      const { file } = await createGenericPackageFile(db, config.dataDir, {
        projectId: ctx.project.id, name: c.name, version: c.version, fileName: c.fileName, status: input.status,
        creatorId: ctx.deployToken ? null : caller?.user.id ?? null, pipelineId: job?.pipeline_id ?? null, stored,
      });
      if (input.select === 'package_file') {
        const pipelines = await loadPackagePipelines(db, config.externalUrl, [file.pipeline_id], new Map([[ctx.project.id, ctx.fullPath]]));
        return reply.code(200).send(presentPackageFile(file, pipelines));
      }
      return reply.code(201).send({ message: '201 Created' });
    });
  });

  route(app, {
    method: 'GET', url, auth: 'optional', jobToken: true, params: downloadParams, preValidation: packageCredentials,
    schema: { summary: 'Download a file of a generic package', tags, produces: ['application/octet-stream'], response: { 200: binary } },
  }, async ({ request, reply, input }) => {
    const c = coordinates(input);
    const ctx = await loadPackageProject(request, input.id, 'read_package');
    const pkg = await findPackageByNameVersion(db, ctx.project.id, 'generic', c.name, c.version);
    if (!pkg || !INSTALLABLE_STATUSES.includes(pkg.status)) throw recordNotFound();
    const file = await latestPackageFile(db, pkg.id, c.fileName);
    const abs = file ? path.join(config.dataDir, file.file_path) : null;
    const size = abs ? await fileSize(abs) : null;
    if (!file || !abs || size === null) throw recordNotFound();
    reply.header('content-disposition', contentDisposition('attachment', file.file_name));
    reply.header('content-length', String(size));
    reply.type('application/octet-stream');
    return reply.send(readStream(abs));
  });
};

function emptyStream(): Readable {
  return Readable.from([]);
}

export default genericPackages;
