/**
 * Serves a project's uploads where their Markdown links lead
 * (`/<namespace…>/<project>/uploads/<secret>/<filename>`, the Service's Projects::UploadsController
 * #show), outside the API prefix. A token or the session cookie says who asks. Who may see the
 * project may fetch its files; anyone else gets 404, as for the project itself. Images, videos and
 * audio of a public project, or of one that leaves enforce_auth_checks_on_uploads off, are served
 * without that check (UploadsController#bypass_auth_checks_on_uploads?), so they show in e-mails.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { MAX_NAMESPACE_DEPTH } from '../../../domain/namespaces/namespaces.queries.ts';
import { findProjectByIdOrPath } from '../../../domain/projects/projects.queries.ts';
import { findProjectUpload } from '../../../domain/uploads/uploads.queries.ts';
import { readProjectUpload, UPLOAD_SECRET } from '../../../domain/uploads/uploads.ts';
import { isEmbeddable } from '../../../domain/uploads/markdown-link.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { ApiError, notFound } from '../../errors.ts';
import { loadProject } from '../../loaders/containers.ts';
import mime from 'mime-types';

const PUBLIC = 20;

const uploadFiles: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function serve(request: FastifyRequest, fullPath: string, secret: string, filename: string) {
    if (!UPLOAD_SECRET.test(secret) || filename.length > 255 || !isStorableText(filename) || !isStorableText(fullPath)) throw notFound();
    const project = await findProjectByIdOrPath(db, fullPath);
    if (!project || /^\d+$/.test(fullPath)) throw notFound();
    const bypass = isEmbeddable(filename) && (project.visibility_level === PUBLIC || project.enforce_auth_checks_on_uploads !== 1);
    if (!bypass) {
      try {
        await loadProject(request, fullPath);
      } catch (err) {
        if (err instanceof ApiError && err.statusCode === 404) throw notFound();
        throw err;
      }
    }
    const row = await findProjectUpload(db, project.id, secret, filename);
    const data = row ? await readProjectUpload(config.dataDir, row) : null;
    if (!row || !data) throw notFound();
    return { data, type: mime.lookup(filename) || 'application/octet-stream', embeddable: isEmbeddable(filename) };
  }

  // One route per nesting depth, as the git routes (find-my-way matches a fixed number of segments).
  for (let depth = 1; depth <= MAX_NAMESPACE_DEPTH; depth += 1) {
    const prefix = ['', ...Array.from({ length: depth }, (_, i) => `:ns${i}`), ':project'].join('/');
    app.get(`${prefix}/uploads/:secret/:filename`, {
      config: { auth: 'optional' },
      schema: { hide: true },
    }, async (request, reply) => {
      const p = request.params as Record<string, string>;
      const namespace = Array.from({ length: depth }, (_, i) => p[`ns${i}`]).join('/');
      const file = await serve(request, `${namespace}/${p.project}`, p.secret, p.filename);
      // Files that are not shown inline are downloads, so a page uploaded as HTML never runs here.
      const disposition = file.embeddable ? 'inline' : 'attachment';
      return reply.type(file.type).header('content-disposition', `${disposition}; filename*=UTF-8''${encodeURIComponent(p.filename)}`)
        .header('x-content-type-options', 'nosniff').header('cache-control', 'private, max-age=0').send(file.data);
    });
  }
};

export default uploadFiles;
