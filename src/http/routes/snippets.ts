/**
 * Personal snippets (CONTRACT §4; lib/api/snippets.rb): each holds one file, committed to its own
 * repository. Reading follows the snippet policy (a snippet the caller may not see is 404
 * `404 Snippet Not Found`); changing and deleting take the author or an administrator (403).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import { findUserById } from '../../domain/users/users.queries.ts';
import { findSnippetById, snippetsByAuthor } from '../../domain/snippets/snippets.queries.ts';
import { canOnSnippet } from '../../domain/snippets/snippet.policy.ts';
import { createSnippet, deleteSnippet, snippetFileNameError, updateSnippet } from '../../domain/snippets/create-snippet.ts';
import { VISIBILITIES, visibilityLevel, type Visibility } from '../../domain/permissions/access.ts';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { defineParams, P } from '../params.ts';
import { paginate, paginationParams } from '../pagination.ts';
import { presentSnippet, SnippetSchema } from '../entities/snippet.ts';

const createParams = defineParams({
  title: P.string(),
  file_name: P.string(),
  content: P.string(),
  description: P.optional(P.string()),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default private' })),
});
const idParams = defineParams({ id: P.integer() });
const updateParams = defineParams({
  id: P.integer(),
  title: P.optional(P.string()),
  file_name: P.optional(P.string()),
  content: P.optional(P.string()),
  description: P.optional(P.string()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
}, { atLeastOneOf: [['title', 'file_name', 'content', 'description', 'visibility']] });
const listParams = defineParams({ ...paginationParams });

interface SnippetInput { title?: string; file_name?: string; content?: string; description?: string; visibility?: Visibility }

function validate(input: SnippetInput): void {
  const errors: Record<string, string[]> = {};
  if (input.title !== undefined && input.title.trim() === '') errors.title = ["can't be blank"];
  if (input.content !== undefined && input.content === '') errors.content = ["can't be blank"];
  if (input.file_name !== undefined) {
    const e = snippetFileNameError(input.file_name);
    if (e) errors.file_name = [e];
  }
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
}

const snippets: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  async function present(s: SnippetRow) {
    const author = await findUserById(db, s.author_id);
    return presentSnippet(s, author!, externalUrl);
  }

  async function readable(request: FastifyRequest, id: number): Promise<SnippetRow> {
    const snippet = await findSnippetById(db, id);
    if (!snippet || !canOnSnippet(request.caller?.user ?? null, 'read_snippet', snippet)) throw notFound('Snippet');
    return snippet;
  }

  app.post('/snippets', {
    config: { auth: 'required', params: createParams },
    schema: { summary: 'Create a personal snippet', tags: ['snippets'], response: { 201: SnippetSchema } },
  }, async (request, reply) => {
    const input = request.input as unknown as Required<Pick<SnippetInput, 'title' | 'file_name' | 'content'>> & SnippetInput;
    validate(input);
    const snippet = await createSnippet(db, config.storages, request.caller!.user, {
      title: input.title, description: input.description ?? null, fileName: input.file_name, content: input.content,
      visibilityLevel: visibilityLevel(input.visibility ?? 'private'),
    });
    reply.code(201);
    return present(snippet);
  });

  app.get('/snippets', {
    config: { auth: 'required', params: listParams },
    schema: { summary: "The caller's snippets", tags: ['snippets'], response: { 200: Type.Array(SnippetSchema) } },
  }, async (request, reply) => {
    const rows = await paginate(db, request, reply, snippetsByAuthor(db, request.caller!.user.id).orderBy('id', 'desc'));
    return Promise.all(rows.map(present));
  });

  app.get('/snippets/:id', {
    config: { auth: 'optional', params: idParams },
    schema: { summary: 'A single snippet', tags: ['snippets'], response: { 200: SnippetSchema } },
  }, async (request) => present(await readable(request, (request.input as { id: number }).id)));

  app.get('/snippets/:id/raw', {
    config: { auth: 'optional', params: idParams },
    schema: { summary: "A snippet's file, as text", tags: ['snippets'] },
  }, async (request, reply) => {
    const snippet = await readable(request, (request.input as { id: number }).id);
    return reply.type('text/plain').header('content-disposition', `inline; filename="${snippet.file_name.replace(/["\\\r\n]/g, '_')}"`).send(snippet.content);
  });

  app.put('/snippets/:id', {
    config: { auth: 'required', params: updateParams },
    schema: { summary: 'Update a snippet', tags: ['snippets'], response: { 200: SnippetSchema } },
  }, async (request) => {
    const input = request.input as unknown as SnippetInput & { id: number };
    const snippet = await readable(request, input.id);
    if (!canOnSnippet(request.caller!.user, 'admin_snippet', snippet)) throw forbidden();
    validate(input);
    const updated = await updateSnippet(db, config.storages, request.caller!.user, snippet, {
      title: input.title, description: input.description, fileName: input.file_name, content: input.content,
      visibilityLevel: input.visibility ? visibilityLevel(input.visibility) : undefined,
    });
    return present(updated);
  });

  app.delete('/snippets/:id', {
    config: { auth: 'required', params: idParams },
    schema: { summary: 'Delete a snippet and its repository', tags: ['snippets'] },
  }, async (request, reply) => {
    const snippet = await readable(request, (request.input as { id: number }).id);
    if (!canOnSnippet(request.caller!.user, 'admin_snippet', snippet)) throw forbidden();
    await deleteSnippet(db, config.storages, snippet);
    return reply.code(204).send();
  });
};

export default snippets;
