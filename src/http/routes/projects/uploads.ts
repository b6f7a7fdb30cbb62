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
import { ApiError } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { presentProjectUpload, ProjectUploadSchema } from '../../entities/project-upload.ts';
import { route } from '../../route.ts';

const params = defineParams({
  id: P.string({ description: 'project id or URL-encoded path' }),
  file: P.file({ description: 'the file to upload (multipart)' }),
});

const uploads: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/projects/:id/uploads', auth: 'required', scopes: ['api'], params,
    schema: { summary: 'Uploads a file to reference from Markdown', tags: ['projects'], response: { 201: ProjectUploadSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    // Workhorse refuses a file past the project's attachment size before the Service sees it.
    const limit = (await currentSettings(db)).max_attachment_size * 1024 * 1024;
    if (input.file.data.length > limit) throw new ApiError(413, { message: '413 Request Entity Too Large' });
    const row = await storeProjectUpload(db, config.dataDir, { projectId: ctx.project.id, userId: caller.user.id, file: input.file });
    reply.code(201);
    return presentProjectUpload(row, `${ctx.namespace.fullPath}/${ctx.project.path}`);
  });
};

export default uploads;
