/**
 * `/<project>/download_export`: the web_url of a finished export (http/entities/import-export.ts),
 * as the Service's ProjectsController#download_export answers it — signed-in users who may
 * administer the project (others the same 404 page as a missing project), counted by the
 * project_download_export rate limit the API's download shares, the archive the API's
 * `/projects/:id/export/download` sends. Without a finished export the page says the link
 * expired, in the Service's words (it redirects to the settings page with that alert).
 */
import fs from 'node:fs';
import { findProjectExport } from '../../../domain/import-export/import-export.queries.ts';
import { exportArchiveName, exportFile } from '../../../domain/import-export/project-export.ts';
import { contentDisposition } from '../../../http/content-disposition.ts';
import { ApiError } from '../../../http/errors.ts';
import { checkImportExportRateLimit } from '../../../http/import-export-rate-limit.ts';
import { html } from '../../html.ts';
import { sendPage } from '../../layout.ts';
import type { WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { redirectToSignIn } from '../../session.ts';

const downloadExport: WebArea = (web) => {
  web.project('GET', 'download_export', async (p) => {
    if (p.rest.length > 0) throw pageError(404);
    if (!p.session) return redirectToSignIn(p.request, p.reply);
    if (!p.project.can('admin_project')) throw pageError(404);
    try {
      await checkImportExportRateLimit(p.request, 'project_download_export', `user:${p.session.user.id}:project:${p.project.project.id}`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.statusCode !== 429) throw err;
      p.reply.header('retry-after', '60');
      return sendPage(p.reply, 429, p.render({
        title: 'Export', active: '',
        body: html`<p role="alert">This endpoint has been requested too many times. Try again later.</p>`,
      }));
    }
    const row = await findProjectExport(p.ctx.db, p.project.project.id);
    const file = row?.status === 'finished' ? await exportFile(p.ctx.config.dataDir, row.file_name) : null;
    if (!file) {
      return sendPage(p.reply, 404, p.render({
        title: 'Export', active: '',
        body: html`<p role="alert">Project export link has expired. Please generate a new export from your project settings.</p>`,
      }));
    }
    return p.reply.code(200).type('application/octet-stream')
      .header('content-disposition', contentDisposition('attachment', exportArchiveName(p.project.fullPath)))
      .header('content-length', String(file.size))
      .header('cache-control', 'private, no-store')
      .send(fs.createReadStream(file.path));
  });
};

export default downloadExport;
