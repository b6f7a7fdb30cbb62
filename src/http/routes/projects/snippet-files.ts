/**
 * One file of a snippet's repository at a ref, raw (the Service's file_content_for, shared by
 * personal and project snippets): `404 Reference Not Found` for a ref that names no commit,
 * `404 File Not Found` for a path that names no file there.
 */
import type { FastifyReply } from 'fastify';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import type { StorageShard } from '../../../config/schema.ts';
import { repositoryPath } from '../../../domain/repositories/storage.ts';
import { entryAt, resolveCommit } from '../../../domain/repositories/git-read.ts';
import { streamBlob } from '../../../domain/repositories/git-bytes.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { notFound } from '../../errors.ts';

export async function sendSnippetFile(reply: FastifyReply, storages: StorageShard[], snippet: SnippetRow, ref: string, filePath: string) {
  const gitDir = repositoryPath(storages, snippet.repository_storage, snippet.disk_path);
  const commit = readableRevision(ref) ? await resolveCommit(gitDir, ref) : null;
  if (!commit) throw notFound('Reference');
  const path = normaliseFilePath(filePath);
  const entry = path.ok ? await entryAt(gitDir, commit, path.path) : null;
  if (!entry || entry.type !== 'blob') throw notFound('File');
  // Streamed, as the project files' raw answer; git's own binary test picks the type.
  const blob = await streamBlob(gitDir, entry.id, 8000);
  reply.raw.on('close', blob.abort);
  if (entry.size !== null) reply.header('content-length', String(entry.size));
  reply.header('content-disposition', `inline; filename="${entry.name.replace(/["\\\r\n]/g, '_')}"`);
  reply.type(blob.head.includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8');
  return reply.send(blob.body);
}
