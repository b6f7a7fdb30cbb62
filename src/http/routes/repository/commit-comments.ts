/**
 * Comments on a commit (lib/api/commits.rb `comments`, entities/commit_note.rb of the Service
 * 15.2; doc/api/commits.md): the commit's notes oldest first, and a new one, on a line of the
 * commit's diff when `path`, `line` and `line_type` name one (a LegacyDiffNote, its place kept in
 * the note's position), otherwise on the commit as a whole. They are notes like any other: the
 * commit's threads (discussions.ts) show them too.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { createNote } from '../../../domain/notes/create-note.ts';
import { mentionTodos } from '../../../domain/notes/mention-todos.ts';
import { commitNotesQuery } from '../../../domain/notes/notes.queries.ts';
import { findDiffLine } from '../../../domain/repositories/diff-lines.ts';
import { readCommit } from '../../../domain/repositories/git-read.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { ApiError, forbidden, missingAttribute, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { errorsInspect, loadCommitNoteable } from '../../loaders/noteables.ts';
import { CommitNoteSchema, presentCommitNotes, type CommitLinePosition } from '../../entities/note.ts';
import { route } from '../../route.ts';

const base = { id: P.string({ description: 'ID or URL-encoded full path of the project' }), sha: P.string({ maxLength: 1024 }) };
const listParams = defineParams({ ...base, ...paginationParams });
const createParams = defineParams({
  ...base,
  note: P.string({ description: 'the comment' }),
  path: P.optional(P.string({ maxLength: MAX_FILE_PATH_BYTES, description: 'the file commented on' })),
  line: P.optional(P.integer({ description: 'the line (required with path)' })),
  line_type: P.optional(P.oneOf(['new', 'old'] as const, { default: 'new' })),
});

const commitComments: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/comments', auth: 'optional', params: listParams,
    schema: { summary: "A commit's comments", tags: ['commits'], response: { 200: Type.Array(CommitNoteSchema) } },
  }, async ({ request, reply, input }) => {
    const nc = await loadCommitNoteable(request, input.id, input.sha);
    return presentCommitNotes(db, await paginate(db, request, reply, commitNotesQuery(db, nc.noteable, nc.scope)), config.externalUrl);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/repository/commits/:sha/comments', auth: 'required', params: createParams,
    schema: { summary: 'Comment on a commit', tags: ['commits'], response: { 201: CommitNoteSchema } },
  }, async ({ request, reply, input, caller }) => {
    // Grape's `given :path do requires :line, :line_type end` (line_type has its default).
    if (input.path !== undefined && input.line === undefined) throw missingAttribute('line');
    const nc = await loadCommitNoteable(request, input.id, input.sha);
    if (!nc.canComment) throw forbidden();
    let position: CommitLinePosition | null = null;
    if (input.path !== undefined && input.line !== undefined) {
      const gitDir = projectRepository(config.storages, nc.ctx.project).gitDir;
      const commit = await readCommit(gitDir, nc.noteable.commitId!);
      if (!commit) throw notFound('Commit');
      const at = await findDiffLine(gitDir, commit, input.path, input.line, input.line_type);
      if (at) position = { path: input.path, line: input.line, line_type: input.line_type };
    }
    const mentions = await mentionTodos(db, input.note, caller.user.id, (u) => nc.canUserRead(u, false));
    const result = await createNote(db, {
      noteable: nc.noteable, authorId: caller.user.id, body: input.note, internal: false, mentions,
      type: position ? 'LegacyDiffNote' : null, position: position ? JSON.stringify(position) : null,
    });
    if (!result.ok) throw new ApiError(400, { message: `Failed to save note ${errorsInspect(result.errors)}` });
    reply.code(201);
    return (await presentCommitNotes(db, [result.value], config.externalUrl))[0];
  });
};

export default commitComments;
