/**
 * Bodies the Service accepts: JSON, Rails-style forms (`a[]=`, `h[k]=`, `a[0][k]=` parsed by qs)
 * and multipart. Multipart fields are collected into an object, with small files buffered as
 * UploadedFile values; routes that take large files set `config.multipart = 'stream'` and read
 * the parts themselves.
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import formbody from '@fastify/formbody';
import qs from 'qs';
import type { UploadedFile } from '../input/params.ts';
import { bufferFile, multipartParts, type MultipartLimits } from '../input/multipart.ts';
import { indexRackArrays } from '../input/rack-arrays.ts';
import { ApiError } from '../errors.ts';
import { addRouteHook, routeMethods } from './route-hooks.ts';

export const QS_OPTIONS: qs.IParseOptions = { arrayLimit: 1000, parameterLimit: 2000, depth: 5 };

const MULTIPART_LIMITS: MultipartLimits = { fileSize: 10 * 1024 * 1024, files: 10, fields: 200 };

export default fp(async (app) => {
  // An empty body sent as application/json is no body, as the Service's Grape reads a body only
  // when Content-Length > 0: python-gitlab 3.12 sends every DELETE that way.
  // Anything else goes to Fastify's own JSON parser, with its poisoning checks and errors.
  const parseJson = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0) return done(null, undefined);
    return parseJson(request, text, done);
  });
  await app.register(formbody, { parser: (body) => qs.parse(indexRackArrays(body), QS_OPTIONS) });
  // multipart/form-data: read whole into request.body here, before authentication reads it,
  // except on routes that stream their parts (multipart.ts); those get the body untouched.
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    if (request.routeOptions.config.multipart === 'stream') {
      done(null);
      return;
    }
    readMultipart(payload, request.headers).then((body) => done(null, body), (err: Error) => done(err));
  });

  // Fastify reads no body on GET. The spec's answer to a 414 is "use a payload", so GET routes
  // with declared parameters read a JSON or form payload themselves; declared-params.ts then
  // merges it as for any other method (path, then body, then query). Requests without a body
  // pay one header check.
  const bodyLimit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  app.addHook('onRoute', (route) => {
    if (!route.config?.params || !routeMethods(route).includes('GET')) return;
    addRouteHook(route, 'preValidation', (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
      const length = request.headers['content-length'];
      const noBody = (length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined;
      if (request.method !== 'GET' || request.body !== undefined || noBody) {
        done();
        return;
      }
      const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      readRawBody(request.raw, bodyLimit).then((text) => {
        if (type === 'application/json' && text.length > 0) {
          parseJson(request, text, (err: Error | null, body?: unknown) => {
            if (!err) request.body = body;
            done(err ?? undefined);
          });
          return;
        }
        if (type === 'application/x-www-form-urlencoded') request.body = qs.parse(text, QS_OPTIONS);
        done();
      }, (err: Error) => done(err));
    });
  });
}, { name: 'body-parsers' });

/** A request body as text, refused with 413 past `limit` bytes. */
function readRawBody(raw: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop keeping it, let the rest drain so the 413 can still be answered.
        raw.off('data', onData);
        raw.resume();
        reject(new ApiError(413, { message: '413 Request Entity Too Large' }));
        return;
      }
      chunks.push(chunk);
    };
    raw.on('data', onData);
    raw.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    raw.once('error', reject);
  });
}

/** A buffered multipart body as one object: text fields parsed with qs (Rails brackets), files as UploadedFile. */
async function readMultipart(payload: Readable, headers: IncomingHttpHeaders): Promise<Record<string, unknown>> {
  // Text fields stay a list of pairs: a name may repeat (`ids[]=1`, `ids[]=2`).
  const text: string[] = [];
  const files: Record<string, UploadedFile> = {};
  for await (const part of multipartParts(payload, headers, MULTIPART_LIMITS)) {
    if (part.type === 'file') {
      files[part.fieldname] = { filename: part.filename, mimetype: part.mimetype, data: await bufferFile(part.file) };
    } else {
      text.push(`${encodeURIComponent(part.fieldname)}=${encodeURIComponent(part.value)}`);
    }
  }
  const parsed = qs.parse(text.join('&'), QS_OPTIONS) as Record<string, unknown>;
  Object.assign(parsed, files);
  return parsed;
}
