/**
 * /-/archive/:ref/:name.:format, the source archives a release offers (entities/release.ts
 * `assets.sources`, and the release hook's): the repository at the ref as tar.gz, tar.bz2, tar or
 * zip, streamed from git as GET /projects/:id/repository/archive does (download_code, else the
 * 404 page). The ref may hold slashes; the file name's extension names the format, as the
 * Service's archive route reads it.
 */
import { ARCHIVE_FORMATS, archiveExtension, archivePrefix, streamArchive } from '../../../domain/repositories/archive.ts';
import { resolveCommit } from '../../../domain/repositories/git-read.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { CONTENT_TYPES, sendStream } from '../../../http/routes/repository/archive.ts';
import { pageError, type WebArea } from '../../router.ts';
import { repositoryOf } from './repository-page.ts';

/** The format a file name ends with (the longest that matches: `.tar.gz` before `.gz`). */
function formatOf(fileName: string): string | null {
  const lower = fileName.toLowerCase();
  const found = [...ARCHIVE_FORMATS].sort((a, b) => b.length - a.length).find((f) => lower.endsWith(`.${f}`));
  return found && lower.length > found.length + 1 ? found : null;
}

const archive: WebArea = (web) => {
  web.project('GET', 'archive', async (p) => {
    const repo = repositoryOf(p);
    if (p.rest.length < 2) throw pageError(404);
    const format = formatOf(p.rest[p.rest.length - 1]!);
    const ref = p.rest.slice(0, -1).join('/');
    const commit = format && readableRevision(ref) ? await resolveCommit(repo.gitDir, ref) : null;
    if (!format || !commit) throw pageError(404);
    const ext = archiveExtension(format);
    const prefix = archivePrefix(p.project.project.path, ref, commit, null);
    return sendStream(p.reply, streamArchive(repo.gitDir, commit, prefix, ext, null), `${prefix}.${ext}`, CONTENT_TYPES[ext]);
  });
};

export default archive;
