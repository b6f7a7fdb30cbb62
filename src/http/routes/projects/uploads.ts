/**
 * `POST /projects/:id/uploads` (the Service's lib/api/projects.rb with UploadService, 15.2): a
 * Markdown attachment, sent as the multipart `file`, at most the instance's max_attachment_size
 * (MiB), kept by domain/uploads and answered as ProjectUpload ({alt, url, full_path, markdown}).
 * Anyone signed in who may read the project may upload (the API asks nothing more of the
 * caller). The file is served by upload-files.ts.
 */
import type { FastifyPluginAsync } from 'fastify';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { storeProjectUpload } from '../../../domain/uploads/uploads.ts';
import type { UploadedFile } from '../../../domain/uploaded-file.ts';
import { missingAttribute } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { bufferFile, isMultipart, multipartParts } from '../../input/multipart.ts';
import { loadProject } from '../../loaders/containers.ts';
import { presentProjectUpload, ProjectUploadSchema } from '../../entities/project-upload.ts';
import { route } from '../../route.ts';

// The multipart `file` is read by the handler (multipart: 'stream'), so that its bound is the
// instance's max_attachment_size rather than the buffered forms' fixed one.
const params = defineParams({
  id: P.string({ description: 'project id or URL-encoded path' }),
});

const uploads: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/projects/:id/uploads', auth: 'required', scopes: ['api'], params, multipart: 'stream',
    schema: {
      summary: 'Uploads a file to reference from Markdown (multipart `file`)', tags: ['projects'],
      response: { 201: ProjectUploadSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    // Workhorse refuses a file past the instance's attachment size (MiB) before the Service sees it: 413.
    const limit = (await currentSettings(db)).max_attachment_size * 1024 * 1024;
    let file: UploadedFile | null = null;
    if (isMultipart(request)) {
      for await (const part of multipartParts(request.raw, request.headers, { fileSize: limit, files: 5, fields: 50 })) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'file' || file) {
          part.file.resume();
          continue;
        }
        file = { filename: part.filename, mimetype: part.mimetype, data: await bufferFile(part.file) };
      }
    }
    if (!file) throw missingAttribute('file');
    const row = await storeProjectUpload(db, config.dataDir, { projectId: ctx.project.id, userId: caller.user.id, file });
    reply.code(201);
    return presentProjectUpload(row, `${ctx.namespace.fullPath}/${ctx.project.path}`);
  });
};

export default uploads;
