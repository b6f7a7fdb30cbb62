/**
 * Repository archives and snapshots as streams: `git archive` (GET /projects/:id/repository/
 * archive) and a tar of the bare repository (GET /projects/:id/snapshot). Nothing is held in
 * memory or written to disk: the caller pipes `body` to the client and calls `abort()` when the
 * client goes away, which ends the child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { gitEnv } from './git-command.ts';

export type ArchiveExtension = 'tar.gz' | 'tar.bz2' | 'tar' | 'zip';

/**
 * The formats the Service's archive route accepts (Gitlab::PathRegex.archive_formats_regex), and
 * the file each one gives (Repository#archive_file_path: anything else is tar.gz).
 */
export const ARCHIVE_FORMATS = ['tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2', 'tar', 'zip'] as const;

export function archiveExtension(format: string): ArchiveExtension {
  switch (format.toLowerCase()) {
    case 'tar.bz2': case 'tbz': case 'tbz2': case 'tb2': case 'bz2': return 'tar.bz2';
    case 'tar': return 'tar';
    case 'zip': return 'zip';
    default: return 'tar.gz';
  }
}

/**
 * The archive's top directory and file name (Repository#archive_prefix with `append_sha`, as the
 * API asks): `<project path>-<ref with / as ->-<commit id>`, then `-<path with / as ->` for a
 * sub-folder.
 */
export function archivePrefix(projectPath: string, ref: string, commitId: string, subPath: string | null): string {
  const segments = [projectPath, ref.replace(/\//g, '-'), commitId];
  if (subPath) segments.push(subPath.replace(/\//g, '-').replace(/^-|-$/g, ''));
  return segments.join('-');
}

export interface ArchiveStream {
  body: Readable;
  abort(): void;
}

/** Ends every child when the stream is abandoned; a failing child ends the body with an error. */
function piped(children: ChildProcess[], last: ChildProcess, okCodes: number[] = [0]): ArchiveStream {
  const body = new PassThrough();
  last.stdout!.pipe(body);
  for (const child of children) {
    child.on('error', (err) => body.destroy(err));
    child.on('close', (code) => {
      if (code !== null && !okCodes.includes(code)) body.destroy(new Error(`archive process exited with ${code}`));
    });
  }
  const abort = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  };
  return { body, abort };
}

/**
 * `git archive` of `commitId` (optionally only `subPath`, a normalised path that exists in it)
 * with every entry under `<prefix>/`; tar.bz2 through the system bzip2, as git has no
 * compressor of its own for it.
 */
export function streamArchive(
  gitDir: string, commitId: string, prefix: string, ext: ArchiveExtension, subPath: string | null,
): ArchiveStream {
  const gitFormat = ext === 'tar.bz2' ? 'tar' : ext;
  const args = ['--git-dir', gitDir, 'archive', `--format=${gitFormat}`, `--prefix=${prefix}/`, commitId,
    ...(subPath ? ['--', `:(literal)${subPath}`] : [])];
  const git = spawn('git', args, { env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  if (ext !== 'tar.bz2') return piped([git], git);
  const bzip2 = spawn('bzip2', ['-c'], { stdio: ['pipe', 'pipe', 'ignore'] });
  git.stdout.pipe(bzip2.stdin);
  bzip2.stdin.on('error', () => { /* bzip2 ended early: its exit code tells */ });
  return piped([git, bzip2], bzip2);
}

/**
 * What a repository snapshot holds (the Service's GetSnapshot): HEAD, packed refs, loose refs and
 * the object store, enough to clone from; not its config or hooks.
 */
const SNAPSHOT_ENTRIES = ['HEAD', 'packed-refs', 'refs', 'objects'];

export async function streamSnapshot(gitDir: string): Promise<ArchiveStream> {
  const present: string[] = [];
  for (const entry of SNAPSHOT_ENTRIES) {
    if (await fs.stat(path.join(gitDir, entry)).then(() => true, () => false)) present.push(entry);
  }
  // Objects a push is still writing (quarantine directories) are not part of the repository yet.
  const args = ['-c', '-f', '-', '--exclude=objects/incoming-*', '--exclude=objects/tmp_objdir*', '-C', gitDir, '--', ...present];
  const tar = spawn('tar', args, { stdio: ['ignore', 'pipe', 'ignore'] });
  // tar's 1 says a file changed while it was read (a concurrent push): the archive is still whole.
  return piped([tar], tar, [0, 1]);
}
