/**
 * Bodies the Service accepts: JSON, Rails-style forms (`a[]=`, `h[k]=`, `a[0][k]=` parsed by qs)
 * and multipart. Multipart fields are collected into an object, with small files buffered as
 * UploadedFile values; routes that take large files set `config.multipart = 'stream'` and read
 * the parts themselves.
 */
import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import qs from 'qs';
import { badRequest } from '../errors.ts';
import type { UploadedFile } from '../params.ts';

export const QS_OPTIONS: qs.IParseOptions = { arrayLimit: 1000, parameterLimit: 2000, depth: 5 };

const MAX_BUFFERED_FILE = 10 * 1024 * 1024;

export default fp(async (app) => {
  await app.register(formbody, { parser: (body) => qs.parse(body, QS_OPTIONS) });
  await app.register(multipart, { limits: { fileSize: MAX_BUFFERED_FILE, files: 10, fields: 200 } });

  // Gather buffered multipart bodies into request.body before authentication reads it.
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart() || request.routeOptions.config.multipart === 'stream') return;
    const fields: Record<string, unknown> = {};
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          const file: UploadedFile = { filename: part.filename, mimetype: part.mimetype, data: await part.toBuffer() };
          fields[part.fieldname] = file;
        } else {
          fields[part.fieldname] = part.value;
        }
      }
    } catch (err) {
      throw badRequest((err as Error).message);
    }
    // Field names may use Rails brackets too: re-parse the text fields with qs.
    const text = Object.entries(fields).filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v as string)}`).join('&');
    const parsed = qs.parse(text, QS_OPTIONS) as Record<string, unknown>;
    for (const [k, v] of Object.entries(fields)) if (typeof v !== 'string') parsed[k] = v;
    request.body = parsed;
  });
}, { name: 'body-parsers' });
