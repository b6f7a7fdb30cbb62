/**
 * ProjectUpload (the Service's API::Entities 15.2): the Markdown name and link of an uploaded
 * file, its URL relative to the project (`/uploads/<secret>/<filename>`) and its full path on
 * the instance (`/<namespace>/<project>/uploads/<secret>/<filename>`).
 */
import { Type, type Static } from 'typebox';
import type { ProjectUploadRow } from '../../db/tables/uploads.ts';
import { markdownLink, markdownName } from '../../domain/uploads/markdown-link.ts';

export const ProjectUploadSchema = Type.Object({
  alt: Type.String(),
  url: Type.String(),
  full_path: Type.String(),
  markdown: Type.String(),
}, { title: 'ProjectUpload' });

export function presentProjectUpload(row: ProjectUploadRow, projectFullPath: string): Static<typeof ProjectUploadSchema> {
  const url = `/uploads/${row.secret}/${row.filename}`;
  return { alt: markdownName(row.filename), url, full_path: `/${projectFullPath}${url}`, markdown: markdownLink(row.filename, url) };
}
