/**
 * Blobs by id (the Service 15.2's GET /projects/:id/repository/blobs/:sha and …/raw,
 * lib/api/repositories.rb): the blob as JSON with base64 content, or its raw bytes streamed.
 * Anything that does not name a blob is 404 Blob.
 */
import type { FastifyPluginAsync } from 'fastify';
import { objectSize, resolveBlob } from '../../../domain/repositories/git-read.ts';
import { readBlob } from '../../../domain/repositories/git-read.ts';
import { GitOutputTooLarge, streamBlob } from '../../../domain/repositories/git-bytes.ts';
import { badRequest, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { BlobSchema } from '../../entities/repository-compare.ts';
import { loadRepository, type RepositoryContext } from '../../loaders/repository.ts';
import { route } from '../../route.ts';

/** As for files (files.ts): larger blobs are read raw, which streams. */
const MAX_BLOB_BYTES = 25 * 1024 * 1024;

const blobParams = defineParams({ id: P.string(), sha: P.string({ maxLength: 64, description: 'the blob id' }) });

const blobs: FastifyPluginAsync = async (app) => {
  async function findBlob(ctx: RepositoryContext, sha: string): Promise<{ id: string; size: number }> {
    const id = await resolveBlob(ctx.repo.gitDir, sha);
    if (!id) throw notFound('Blob');
    return { id, size: await objectSize(ctx.repo.gitDir, id) };
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/blobs/:sha', auth: 'optional', params: blobParams,
    schema: { summary: 'A blob with its content (base64)', tags: ['repositories'], response: { 200: BlobSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const blob = await findBlob(ctx, input.sha);
    let content: Buffer;
    try {
      content = await readBlob(ctx.repo.gitDir, blob.id, MAX_BLOB_BYTES);
    } catch (err) {
      if (err instanceof GitOutputTooLarge) throw badRequest('Blob is too large to be read through the API; read it raw');
      throw err;
    }
    return { size: content.length, encoding: 'base64' as const, content: content.toString('base64'), sha: blob.id };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/blobs/:sha/raw', auth: 'optional', params: blobParams,
    schema: { summary: "A blob's raw content (streamed)", tags: ['repositories'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const blob = await findBlob(ctx, input.sha);
    const stream = await streamBlob(ctx.repo.gitDir, blob.id, 8000);
    reply.raw.on('close', stream.abort);
    // The Service's send_git_blob: never cached, shown inline, typed by its content (Workhorse).
    reply.header('cache-control', 'no-cache, no-store');
    reply.header('content-disposition', 'inline');
    reply.header('content-length', String(blob.size));
    reply.type(stream.head.includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8');
    return reply.send(stream.body);
  });
};

export default blobs;
