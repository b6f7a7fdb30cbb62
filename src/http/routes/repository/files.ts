/**
 * Single files of a project's repository (the Service's API::Files): read (JSON with base64
 * content, or raw), blame, and create / update / delete, each write one commit through
 * commit-actions.ts, so a file write is the same real git commit as POST .../commits. The
 * `file_path` segment is URL-encoded (`dir%2Ffile.txt`) and normalised before git sees it.
 * Responses carry the Service's X-Gitlab-* file headers, which HEAD answers alone.
 */
import crypto from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  blame, entryAt, lastCommitFor, readBlob, readCommits, resolveCommit, type TreeEntry,
} from '../../../domain/repositories/git-read.ts';
import { GitOutputTooLarge, streamBlob } from '../../../domain/repositories/git-bytes.ts';
import { commitActions, type CommitAction } from '../../../domain/repositories/commit-actions.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { ApiError, badRequest, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { CommitSchema, presentCommit } from '../../entities/commit.ts';
import { FileCommitSchema, RepositoryFileSchema } from '../../entities/repository-tree.ts';
import { authorizePushToBranch, loadRepository, repositoryReadOnly, type RepositoryContext } from '../../loaders/repository.ts';
import { PUSH_INTO_BRANCH_DENIED } from '../../../domain/protected-refs/ref-rules.ts';
import { decodeContent } from './content.ts';
import { rejectLongStrings, rejectNulBytes, rejectUnusableGitIdentity } from '../../input/string-guards.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

/**
 * Largest blob served as JSON (base64 in memory, a third larger again); larger ones answer 400
 * and are read with /raw, which streams.
 */
const MAX_BLOB_BYTES = 25 * 1024 * 1024;

const readParams = defineParams({ id: P.string(), file_path: P.string(), ref: P.string({ description: 'branch, tag or commit' }) });
const rawParams = defineParams({
  id: P.string(), file_path: P.string(),
  ref: P.optional(P.string({ description: 'default: the default branch' })),
});
const writeAttributes = {
  id: P.string(),
  file_path: P.string(),
  branch: P.string(),
  start_branch: P.optional(P.string()),
  commit_message: P.string(),
  author_email: P.optional(P.string()),
  author_name: P.optional(P.string()),
};
const createParams = defineParams({
  ...writeAttributes,
  content: P.string(),
  encoding: P.optional(P.oneOf(['text', 'base64'] as const, { default: 'text' })),
  execute_filemode: P.optional(P.boolean()),
});
const updateParams = defineParams({
  ...writeAttributes,
  content: P.string(),
  encoding: P.optional(P.oneOf(['text', 'base64'] as const, { default: 'text' })),
  execute_filemode: P.optional(P.boolean()),
  last_commit_id: P.optional(P.string()),
});
const deleteParams = defineParams({ ...writeAttributes, last_commit_id: P.optional(P.string()) });

interface WriteInput {
  id: string; file_path: string; branch: string; start_branch?: string; commit_message: string; author_email?: string; author_name?: string;
  content: string; encoding: 'text' | 'base64'; execute_filemode?: boolean; last_commit_id?: string;
}

interface Found {
  commitId: string;
  entry: TreeEntry;
  path: string;
  ref: string;
}

const files: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  function cleanPath(raw: string): string {
    const p = normaliseFilePath(raw);
    if (!p.ok) throw badRequest(p.message);
    return p.path;
  }

  /** The blob at `file_path` of `ref`: 404 Commit for a ref that names nothing, 404 File otherwise. */
  async function findFile(ctx: RepositoryContext, rawPath: string, ref: string): Promise<Found> {
    const path = cleanPath(rawPath);
    const commitId = readableRevision(ref) ? await resolveCommit(ctx.repo.gitDir, ref) : null;
    if (!commitId) throw notFound('Commit');
    const entry = await entryAt(ctx.repo.gitDir, commitId, path);
    if (!entry || entry.type !== 'blob') throw notFound('File');
    return { commitId, entry, path, ref };
  }

  async function blobOf(ctx: RepositoryContext, f: Found): Promise<Buffer> {
    try {
      return await readBlob(ctx.repo.gitDir, f.entry.id, MAX_BLOB_BYTES);
    } catch (err) {
      if (err instanceof GitOutputTooLarge) throw badRequest('File is too large to be read through the API');
      throw err;
    }
  }

  /** The Service's file headers (API::Files `file_header`); values are ASCII-safe. */
  async function fileHeaders(ctx: RepositoryContext, reply: FastifyReply, f: Found, content: Buffer) {
    const lastCommit = (await lastCommitFor(ctx.repo.gitDir, f.commitId, f.path)) ?? f.commitId;
    const headers = {
      'x-gitlab-blob-id': f.entry.id,
      'x-gitlab-commit-id': f.commitId,
      'x-gitlab-content-sha256': crypto.createHash('sha256').update(content).digest('hex'),
      'x-gitlab-encoding': 'base64',
      'x-gitlab-file-name': encodeURIComponent(f.entry.name),
      'x-gitlab-file-path': encodeURIComponent(f.path),
      'x-gitlab-last-commit-id': lastCommit,
      'x-gitlab-ref': encodeURIComponent(f.ref),
      'x-gitlab-size': String(content.length),
      'x-gitlab-execute-filemode': String(f.entry.mode === '100755'),
    };
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    return lastCommit;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/files/:file_path', auth: 'optional', params: readParams,
    schema: {
      summary: 'A file with its content (base64) and metadata', tags: ['repository_files'],
      response: { 200: RepositoryFileSchema },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const f = await findFile(ctx, input.file_path, input.ref);
    const content = await blobOf(ctx, f);
    const lastCommit = await fileHeaders(ctx, reply, f, content);
    return {
      file_name: f.entry.name, file_path: f.path, size: content.length, encoding: 'base64',
      content_sha256: crypto.createHash('sha256').update(content).digest('hex'), ref: f.ref, blob_id: f.entry.id,
      commit_id: f.commitId, last_commit_id: lastCommit, execute_filemode: f.entry.mode === '100755', content: content.toString('base64'),
    };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/files/:file_path/raw', auth: 'optional', params: rawParams,
    schema: { summary: "A file's raw content", tags: ['repository_files'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const f = await findFile(ctx, input.file_path, input.ref || ctx.project.default_branch || 'HEAD');
    // Streamed, whatever its size; the Service's raw answer names the blob and its type only.
    const blob = await streamBlob(ctx.repo.gitDir, f.entry.id, 8000);
    reply.raw.on('close', blob.abort);
    reply.header('x-gitlab-blob-id', f.entry.id);
    if (f.entry.size !== null) reply.header('content-length', String(f.entry.size));
    // git's own test for binary content: a NUL byte in the first 8000 bytes.
    reply.type(blob.head.includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8');
    return reply.send(blob.body);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/files/:file_path/blame', auth: 'optional', params: readParams,
    schema: {
    summary: 'Which commit last changed each line of a file',
    tags: ['repository_files'],
    response: { 200: Type.Array(Type.Object({ commit: CommitSchema, lines: Type.Array(Type.String()) })) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const f = await findFile(ctx, input.file_path, input.ref);
    await fileHeaders(ctx, reply, f, await blobOf(ctx, f));
    const ranges = await blame(ctx.repo.gitDir, f.commitId, f.path);
    const commits = await readCommits(ctx.repo.gitDir, ranges.map((r) => r.commitId));
    return ranges.map((r) => ({ commit: presentCommit(commits.get(r.commitId)!, ctx.webUrl), lines: r.lines }));
  });

  async function write(
    request: FastifyRequest, caller: Caller, input: Omit<WriteInput, 'content' | 'encoding'>, action: Omit<CommitAction, 'filePath'>,
  ) {
    rejectNulBytes(input, ['commit_message', 'author_name', 'author_email']);
    rejectLongStrings(input, ['author_name', 'author_email'], 255);
    rejectUnusableGitIdentity(input, ['author_name', 'author_email']);
    if (Buffer.byteLength(input.commit_message) > MAX_MESSAGE_BYTES) throw invalidParams(['commit_message is too long']);
    const ctx = await loadRepository(request, input.id, 'write', PUSH_INTO_BRANCH_DENIED);
    await authorizePushToBranch(request, ctx, caller.user, input.branch);
    const path = cleanPath(input.file_path);
    const user = caller.user;
    const committer = { name: user.name, email: user.commit_email || user.email };
    const result = await commitActions(db, ctx.repo, {
      branch: input.branch, startBranch: input.start_branch, force: false, message: input.commit_message,
      author: { name: input.author_name || committer.name, email: input.author_email || committer.email }, committer,
      actions: [{ ...action, filePath: path }],
    });
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(400, { message: result.message });
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    return { file_path: path, branch: input.branch };
  }

  route(app, {
    method: 'POST', url: '/projects/:id/repository/files/:file_path', auth: 'required', params: createParams,
    schema: { summary: 'Create a file (one commit)', tags: ['repository_files'], response: { 201: FileCommitSchema } },
  }, async ({ request, reply, input, caller }) => {
    const out = await write(request, caller, input, {
      action: 'create', content: decodeContent(input.content, input.encoding),
      executeFilemode: input.execute_filemode,
    });
    reply.code(201);
    return out;
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/repository/files/:file_path', auth: 'required', params: updateParams,
    schema: { summary: 'Update a file (one commit)', tags: ['repository_files'], response: { 200: FileCommitSchema } },
  }, async ({ request, input, caller }) => {
    return write(request, caller, input, {
      action: 'update', content: decodeContent(
        input.content, input.encoding,
      ), executeFilemode: input.execute_filemode, lastCommitId: input.last_commit_id,
    });
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/repository/files/:file_path', auth: 'required', params: deleteParams,
    schema: { summary: 'Delete a file (one commit)', tags: ['repository_files'] },
  }, async ({ request, reply, input, caller }) => {
    await write(request, caller, input, { action: 'delete', lastCommitId: input.last_commit_id });
    reply.code(204).send();
  });
};

export default files;
