/**
 * Bodies the Service accepts: JSON, Rails-style forms (`a[]=`, `h[k]=`, `a[0][k]=` parsed by qs)
 * and multipart. Multipart fields are collected into an object, with small files buffered as
 * UploadedFile values; routes that take large files set `config.multipart = 'stream'` and read
 * the parts themselves.
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import qs from 'qs';
import { badRequest } from '../errors.ts';
import type { UploadedFile } from '../params.ts';

export const QS_OPTIONS: qs.IParseOptions = { arrayLimit: 1000, parameterLimit: 2000, depth: 5 };

const MAX_BUFFERED_FILE = 10 * 1024 * 1024;

export default fp(async (app) => {
  // An empty body sent as application/json is no body, as the Service's Grape reads a body only
  // when Content-Length > 0: python-gitlab 3.12 sends every DELETE that way.
  // Anything else goes to Fastify's own JSON parser, with its poisoning checks and errors.
  const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0) return done(null, undefined);
    return parseJson(request, text, done);
  });
  await app.register(formbody, { parser: (body) => qs.parse(body, QS_OPTIONS) });
  await app.register(multipart, { limits: { fileSize: MAX_BUFFERED_FILE, files: 10, fields: 200 } });

  // Gather buffered multipart bodies into request.body before authentication reads it.
  app.addHook('preValidation', (request, _reply, done) => {
    // Most requests are not multipart: answer them without entering the async gatherer.
    if (!request.isMultipart() || request.routeOptions.config.multipart === 'stream') {
      done();
      return;
    }
    gatherMultipart(request).then(() => done(), done);
  });

  async function gatherMultipart(request: FastifyRequest): Promise<void> {
    // Text fields stay a list of pairs: a name may repeat (`ids[]=1`, `ids[]=2`).
    const text: string[] = [];
    const files: Record<string, UploadedFile> = {};
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          files[part.fieldname] = { filename: part.filename, mimetype: part.mimetype, data: await part.toBuffer() };
        } else {
          text.push(`${encodeURIComponent(part.fieldname)}=${encodeURIComponent(String(part.value))}`);
        }
      }
    } catch (err) {
      throw badRequest((err as Error).message);
    }
    // Field names may use Rails brackets too: re-parse the text fields with qs.
    const parsed = qs.parse(text.join('&'), QS_OPTIONS) as Record<string, unknown>;
    Object.assign(parsed, files);
    request.body = parsed;
  }
}, { name: 'body-parsers' });
