/**
 * Personal snippets (CONTRACT §4; lib/api/snippets.rb): each holds one file, committed to its own
 * repository. Reading follows the snippet policy (a snippet the caller may not see is 404
 * `404 Snippet Not Found`); changing and deleting take the author or an administrator (403).
 * Administrators also see `repository_storage`. While the snippet's repository moves to another
 * storage (read-only), changing its file and deleting it are refused.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import type { UserRow } from '../../../db/types.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { findSnippetById, snippetsByAuthor } from '../../../domain/snippets/snippets.queries.ts';
import { canOnSnippet } from '../../../domain/snippets/snippet.policy.ts';
import { createSnippet, deleteSnippet, snippetFileNameError, updateSnippet } from '../../../domain/snippets/create-snippet.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defaultVisibilityLevel, restrictedVisibilityError } from '../../../domain/settings/visibility.ts';
import { VISIBILITIES, visibilityLevel, type Visibility } from '../../../domain/permissions/access.ts';
import { ApiError, conflict, forbidden, notFound, validationFailed } from '../../errors.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { presentSnippet, presentSnippetWithAdmin, SnippetSchema, SnippetWithAdminSchema } from '../../entities/snippet.ts';

const serialize = {
  Snippet: compileSerializer(SnippetSchema),
  SnippetWithAdmin: compileSerializer(SnippetWithAdminSchema),
  Snippets: compileSerializer(Type.Array(SnippetSchema)),
  SnippetsWithAdmin: compileSerializer(Type.Array(SnippetWithAdminSchema)),
};
/** Administrators also see the repository's shard (PersonalSnippetWithAdmin). */
const OneSnippet = Type.Union([SnippetWithAdminSchema, SnippetSchema]);

/** The Service's default snippet_size_limit (50 MB); the request body limit stops sooner. */
const SNIPPET_CONTENT_MAX = 50 * 1024 * 1024;

// Snippet's title and file name are varchar(255) (issue 13); content is bounded by the size limit.
const createParams = defineParams({
  title: P.name(),
  file_name: P.name(),
  content: P.string({ maxLength: SNIPPET_CONTENT_MAX }),
  description: P.optional(P.string()),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default private' })),
});
const idParams = defineParams({ id: P.integer() });
const updateParams = defineParams({
  id: P.integer(),
  title: P.optional(P.name()),
  file_name: P.optional(P.name()),
  content: P.optional(P.string({ maxLength: SNIPPET_CONTENT_MAX })),
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

  const isAdmin = (request: FastifyRequest) => request.caller?.user.admin === 1;

  async function presentOne(request: FastifyRequest, s: SnippetRow) {
    const author = (await findUserById(db, s.author_id))!;
    return isAdmin(request) ? presentSnippetWithAdmin(s, author, externalUrl) : presentSnippet(s, author, externalUrl);
  }

  async function present(request: FastifyRequest, reply: FastifyReply, s: SnippetRow) {
    serializeWith(reply, isAdmin(request) ? serialize.SnippetWithAdmin : serialize.Snippet);
    return presentOne(request, s);
  }

  async function readable(request: FastifyRequest, id: number): Promise<SnippetRow> {
    const snippet = await findSnippetById(db, id);
    if (!snippet || !canOnSnippet(request.caller?.user ?? null, 'read_snippet', snippet)) throw notFound('Snippet');
    return snippet;
  }

  /**
   * The level a snippet gets (default_snippet_visibility when none is named), or the Service's
   * 403 `{"message":{"error":"Visibility level … has been restricted …"}}` (Snippets::BaseService
   * forbidden_visibility_error) for a level the administrator restricted.
   */
  async function allowedVisibility(user: UserRow, visibility: Visibility | undefined, creating: boolean): Promise<number | undefined> {
    if (!visibility && !creating) return undefined;
    const settings = await currentSettings(db);
    const level = visibility ? visibilityLevel(visibility) : defaultVisibilityLevel(settings, 'snippet');
    const restricted = restrictedVisibilityError(settings, user, level);
    if (restricted) throw new ApiError(403, { message: { error: `Visibility level ${restricted}` } });
    return level;
  }

  app.post('/snippets', {
    config: { auth: 'required', params: createParams },
    schema: { summary: 'Create a personal snippet', tags: ['snippets'], response: { 201: OneSnippet } },
  }, async (request, reply) => {
    const input = request.input as unknown as Required<Pick<SnippetInput, 'title' | 'file_name' | 'content'>> & SnippetInput;
    validate(input);
    const level = await allowedVisibility(request.caller!.user, input.visibility, true);
    const snippet = await createSnippet(db, config.storages, request.caller!.user, {
      title: input.title, description: input.description ?? null, fileName: input.file_name, content: input.content,
      visibilityLevel: level!,
    });
    reply.code(201);
    return present(request, reply, snippet);
  });

  app.get('/snippets', {
    config: { auth: 'required', params: listParams },
    schema: { summary: "The caller's snippets", tags: ['snippets'], response: { 200: Type.Union([Type.Array(SnippetWithAdminSchema), Type.Array(SnippetSchema)]) } },
  }, async (request, reply) => {
    const rows = await paginate(db, request, reply, snippetsByAuthor(db, request.caller!.user.id).orderBy('id', 'desc'));
    serializeWith(reply, isAdmin(request) ? serialize.SnippetsWithAdmin : serialize.Snippets);
    return Promise.all(rows.map((s) => presentOne(request, s)));
  });

  app.get('/snippets/:id', {
    config: { auth: 'optional', params: idParams },
    schema: { summary: 'A single snippet', tags: ['snippets'], response: { 200: OneSnippet } },
  }, async (request, reply) => present(request, reply, await readable(request, (request.input as { id: number }).id)));

  app.get('/snippets/:id/raw', {
    config: { auth: 'optional', params: idParams },
    schema: { summary: "A snippet's file, as text", tags: ['snippets'] },
  }, async (request, reply) => {
    const snippet = await readable(request, (request.input as { id: number }).id);
    return reply.type('text/plain').header('content-disposition', `inline; filename="${snippet.file_name.replace(/["\\\r\n]/g, '_')}"`).send(snippet.content);
  });

  app.put('/snippets/:id', {
    config: { auth: 'required', params: updateParams },
    schema: { summary: 'Update a snippet', tags: ['snippets'], response: { 200: OneSnippet } },
  }, async (request, reply) => {
    const input = request.input as unknown as SnippetInput & { id: number };
    const snippet = await readable(request, input.id);
    if (!canOnSnippet(request.caller!.user, 'admin_snippet', snippet)) throw forbidden();
    validate(input);
    const level = input.visibility && visibilityLevel(input.visibility) !== snippet.visibility_level
      ? await allowedVisibility(request.caller!.user, input.visibility, false) : undefined;
    const result = await updateSnippet(db, config.storages, request.caller!.user, snippet.id, {
      title: input.title, description: input.description, fileName: input.file_name, content: input.content,
      visibilityLevel: level,
    });
    if (!result.ok) {
      if (result.reason === 'not_found') throw notFound('Snippet');
      // The Service commits through a hook that refuses a read-only repository; the failed
      // commit becomes the model error `repository: "Error updating the snippet"`, answered as
      // render_api_error!({error: full_messages}, 400) (Snippets::UpdateService, lib/api/snippets.rb).
      throw validationFailed({ error: 'Repository Error updating the snippet' });
    }
    return present(request, reply, result.value);
  });

  app.delete('/snippets/:id', {
    config: { auth: 'required', params: idParams },
    schema: { summary: 'Delete a snippet and its repository', tags: ['snippets'] },
  }, async (request, reply) => {
    const snippet = await readable(request, (request.input as { id: number }).id);
    if (!canOnSnippet(request.caller!.user, 'admin_snippet', snippet)) throw forbidden();
    const result = await deleteSnippet(db, config.storages, snippet.id);
    if (!result.ok) {
      if (result.reason === 'not_found') throw notFound('Snippet');
      // The Service has no API-level refusal here (Repositories::DestroyService removes the
      // repository under the move); kiln refuses, as a conflict with the move under way, in the
      // words the git layer uses for a push.
      throw conflict(READ_ONLY_MESSAGE);
    }
    return reply.code(204).send();
  });
};

export default snippets;
