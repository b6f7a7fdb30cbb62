/**
 * multipart/form-data bodies (RFC 7578), read with busboy. Most routes get the whole body as an
 * object from the content-type parser (body-parsers.ts); routes that take large files say
 * `config.multipart = 'stream'` and iterate the parts themselves. Nothing here runs for requests
 * that are not multipart: no hook, no listener, which is why kiln does not use a plugin that adds
 * both to every request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../errors.ts';

export interface MultipartLimits {
  fileSize: number;
  files: number;
  fields: number;
}

export type MultipartPart =
  | { type: 'field'; fieldname: string; value: string }
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: BusboyFileStream };

export function isMultipart(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && /^multipart\/form-data\s*(;|$)/i.test(type);
}

const tooLarge = () => new ApiError(413, { message: '413 Request Entity Too Large' });

/**
 * The parts of a multipart body in order. Each file's stream must be read to its end (or
 * resumed) before the next part can arrive. Throws 413 past a limit and 400 for a malformed or
 * cut-off body.
 */
export async function* multipartParts(
  body: Readable, headers: IncomingHttpHeaders, limits: MultipartLimits,
): AsyncGenerator<MultipartPart> {
  let bb: BusboyInstance;
  try {
    bb = new Busboy({
      headers: headers as IncomingHttpHeaders & { 'content-type': string },
      limits: { ...limits, parts: limits.files + limits.fields },
    });
  } catch (err) {
    // A multipart Content-Type without a boundary, say.
    throw badRequest((err as Error).message);
  }
  const queue: (MultipartPart | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const push = (item: MultipartPart | Error | null) => {
    queue.push(item);
    wake?.();
    wake = null;
  };
  let sawData = false;
  body.once('data', () => {
    sawData = true;
  });
  bb.on('field', (fieldname: string, value: string) => push({ type: 'field', fieldname, value }));
  bb.on('file', (fieldname: string, file: BusboyFileStream, filename: string, _encoding: string, mimetype: string) => {
    push({ type: 'file', fieldname, filename, mimetype, file });
  });
  bb.on('filesLimit', () => push(tooLarge()));
  bb.on('fieldsLimit', () => push(tooLarge()));
  bb.on('partsLimit', () => push(tooLarge()));
  bb.on('finish', () => push(null));
  bb.on('error', (err: Error) => {
    // An empty body is an empty form, as the Service reads it.
    push(!sawData && err.message === 'Unexpected end of multipart data' ? null : badRequest(err.message));
  });
  const onClose = () => {
    if (!body.readableEnded) push(badRequest('the request was closed before the multipart data was fully parsed'));
  };
  body.on('close', onClose);
  body.pipe(bb);
  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => { wake = resolve; });
      const item = queue.shift()!;
      if (item === null) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  } finally {
    body.off('close', onClose);
    body.unpipe(bb);
    // Whatever the consumer did not read is drained, so the connection can carry the answer.
    body.resume();
  }
}

/** A file part read into memory; 413 when it is over the size limit. */
export async function bufferFile(file: BusboyFileStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file) chunks.push(chunk as Buffer);
  if (file.truncated) throw tooLarge();
  return Buffer.concat(chunks);
}
