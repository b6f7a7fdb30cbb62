/**
 * Archives and snapshots of a project's repository, streamed from git as they are made (the
 * Service 15.2's GET /projects/:id/repository/archive[.format], lib/api/repositories.rb, which
 * Workhorse streams from Gitaly's GetArchive; and GET /projects/:id/snapshot,
 * lib/api/project_snapshots.rb, from GetSnapshot). Nothing is buffered: a client that goes away
 * ends the git process.
 */
import { wikiRepository } from '../../../domain/wikis/wiki-repository.ts';
import { repositoryExists } from '../../../domain/repositories/repositories.ts';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  ARCHIVE_FORMATS, archiveExtension, archivePrefix, streamArchive, streamSnapshot, type ArchiveStream,
} from '../../../domain/repositories/archive.ts';
import { entryAt, resolveCommit } from '../../../domain/repositories/git-read.ts';
import { MAX_REF_NAME, readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { loadRepository } from '../../loaders/repository.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { route } from '../../route.ts';

const archiveAttributes = {
  id: P.string(),
  sha: P.optional(P.string({ maxLength: MAX_REF_NAME, description: 'the commit, branch or tag; default: the default branch' })),
  path: P.optional(P.string({ maxLength: 4096, description: 'only this sub-folder' })),
};
const archiveParams = defineParams({
  ...archiveAttributes,
  format: P.optional(P.string({ maxLength: 16, description: 'tar.gz (default), tar.bz2, tbz, tbz2, tb2, bz2, tar or zip' })),
});
const archiveFormatParams = defineParams({
  ...archiveAttributes,
  format: P.oneOf(ARCHIVE_FORMATS, { description: 'the archive format, as the path extension' }),
});
const snapshotParams = defineParams({
  id: P.string(),
  wiki: P.optional(P.boolean({ default: false, description: "the wiki's repository instead of the project's" })),
});

/** An archive streamed as a download (also the web's /-/archive/ links, web/routes/repository/archive.ts). */
export function sendStream(reply: FastifyReply, stream: ArchiveStream, filename: string, type: string) {
  reply.raw.on('close', stream.abort);
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  reply.header('content-transfer-encoding', 'binary');
  reply.type(type);
  return reply.send(stream.body);
}

/** Workhorse's archive headers: zip is named, every tar is octet-stream. */
export const CONTENT_TYPES = {
  'tar.gz': 'application/octet-stream', 'tar.bz2': 'application/octet-stream', 'tar': 'application/octet-stream', 'zip': 'application/zip',
};

interface ArchiveInput {
  id: string;
  sha?: string;
  path?: string;
  format?: string;
}

const archive: FastifyPluginAsync = async (app) => {
  const handler = async ({ request, reply, input }: { request: FastifyRequest; reply: FastifyReply; input: ArchiveInput }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    // The Service answers 404 File for whatever it cannot archive (an unknown ref, a bad path).
    const ref = input.sha || ctx.project.default_branch || 'HEAD';
    const commit = readableRevision(ref) ? await resolveCommit(ctx.repo.gitDir, ref) : null;
    if (!commit) throw notFound('File');
    let subPath: string | null = null;
    if (input.path !== undefined && input.path.replace(/\//g, '') !== '') {
      const p = normaliseFilePath(input.path);
      if (!p.ok || !(await entryAt(ctx.repo.gitDir, commit, p.path))) throw notFound('File');
      subPath = p.path;
    }
    const ext = archiveExtension(input.format ?? 'tar.gz');
    const prefix = archivePrefix(ctx.project.path, ref, commit, subPath);
    const stream = streamArchive(ctx.repo.gitDir, commit, prefix, ext, subPath);
    return sendStream(reply, stream, `${prefix}.${ext}`, CONTENT_TYPES[ext]);
  };

  route(app, {
    method: 'GET', url: '/projects/:id/repository/archive', auth: 'optional', params: archiveParams,
    schema: { summary: 'An archive of the repository (streamed)', tags: ['repositories'] },
  }, handler);

  route(app, {
    method: 'GET', url: '/projects/:id/repository/archive.:format', auth: 'optional', params: archiveFormatParams,
    schema: { summary: 'An archive of the repository in the format its extension names (streamed)', tags: ['repositories'] },
  }, handler);

  route(app, {
    method: 'GET', url: '/projects/:id/snapshot', auth: 'optional', params: snapshotParams,
    schema: { summary: 'A tar of the bare repository (administrators)', tags: ['projects'] },
  }, async ({ request, reply, input }) => {
    // The Service checks the caller before it looks the project up (authorize_read_git_snapshot!).
    authenticatedAsAdmin(request);
    const ctx = await loadProject(request, input.id);
    const { config } = request.server.kiln;
    // `wiki`: the project's wiki repository (domain/wikis), when one was ever written or cloned.
    const wikiDir = wikiRepository(config.storages, ctx.project).gitDir;
    if (input.wiki && !(await repositoryExists(wikiDir))) throw notFound('Wiki Repository');
    const stream = await streamSnapshot(input.wiki ? wikiDir : projectRepository(config.storages, ctx.project).gitDir);
    return sendStream(reply, stream, 'snapshot.tar', 'application/x-tar');
  });
};

export default archive;
