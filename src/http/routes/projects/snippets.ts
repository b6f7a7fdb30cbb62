/**
 * Personal snippets (CONTRACT §4; lib/api/snippets.rb): up to ten files, committed to the
 * snippet's own repository, written as `files` (`[{file_path, content}]`; on update
 * `[{action, file_path, previous_path, content}]`) or the older `file_name` + `content` of a
 * one-file snippet, with the Service's parameter rules (API::Helpers::SnippetsHelpers) and
 * messages (Snippets::BaseService). Reading follows the snippet policy (a snippet the caller may not see is 404
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
import {
  createSnippet, deleteSnippet, SNIPPET_CONTENT_MAX, updateSnippet, type SnippetFailure,
} from '../../../domain/snippets/create-snippet.ts';
import { isBlank, SNIPPET_ACTIONS, type SnippetFileAction } from '../../../domain/snippets/snippet-actions.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defaultVisibilityLevel, restrictedVisibilityError } from '../../../domain/settings/visibility.ts';
import { VISIBILITIES, visibilityLevel, type Visibility } from '../../../domain/permissions/access.ts';
import { ApiError, conflict, forbidden, invalidParams, missingAttribute, notFound, validationFailed } from '../../errors.ts';
import { INVALID_FILE_PATH, validFilePathParam } from '../../input/file-path-param.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { presentSnippet, presentSnippetWithAdmin, SnippetSchema, SnippetWithAdminSchema } from '../../entities/snippet.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const serialize = {
  Snippet: compileSerializer(SnippetSchema),
  SnippetWithAdmin: compileSerializer(SnippetWithAdminSchema),
  Snippets: compileSerializer(Type.Array(SnippetSchema)),
  SnippetsWithAdmin: compileSerializer(Type.Array(SnippetWithAdminSchema)),
};
/** Administrators also see the repository's shard (PersonalSnippetWithAdmin). */
const OneSnippet = Type.Union([SnippetWithAdminSchema, SnippetSchema]);

// Snippet's title is varchar(255) (issue 13); contents are bounded by the size limit (the
// request body limit stops sooner) and paths as file-paths.ts bounds them before git sees them.
const content = P.string({ maxLength: SNIPPET_CONTENT_MAX });
const filePath = P.string({ maxLength: MAX_FILE_PATH_BYTES });
const createParams = defineParams({
  title: P.name(),
  description: P.optional(P.string()),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default private' })),
  files: P.optional(P.array(P.object({ file_path: P.optional(filePath), content: P.optional(content) }), { description: 'the files' })),
  content: P.optional(content),
  file_name: P.optional(filePath),
}, { mutuallyExclusive: [['files', 'content']] });
const idParams = defineParams({ id: P.integer() });
const updateParams = defineParams({
  id: P.integer(),
  content: P.optional(content),
  description: P.optional(P.string()),
  file_name: P.optional(filePath),
  title: P.optional(P.name()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
  files: P.optional(P.array(P.object({
    action: P.optional(P.string({ maxLength: 255, description: SNIPPET_ACTIONS.join(', ') })),
    content: P.optional(content), file_path: P.optional(filePath), previous_path: P.optional(filePath),
  }), { description: 'actions on the files' })),
}, {
  atLeastOneOf: [['content', 'description', 'files', 'file_name', 'title', 'visibility']],
  mutuallyExclusive: [['files', 'content'], ['files', 'file_name']],
});
const listParams = defineParams({ ...paginationParams });

interface FileParam { action?: string; file_path?: string; previous_path?: string; content?: string }

/**
 * Grape's rules for what the declarations above cannot say (`allow_blank: false`, `given`,
 * `exactly_one_of`, the nested `requires` and `values` of `files`): a missing attribute in the
 * spec's shape first, then every other message in Grape's.
 */
function checkParams(input: { title?: string; content?: string; file_name?: string; files?: FileParam[] }, creating: boolean): void {
  const errors: string[] = [];
  let missing: string | undefined;
  if (input.title !== undefined && isBlank(input.title)) errors.push('title is empty');
  (input.files ?? []).forEach((f, i) => {
    const name = (key: string) => `files[${i}][${key}]`;
    if (creating) {
      for (const key of ['file_path', 'content'] as const) {
        if (f[key] === undefined) missing ??= name(key);
        else if (isBlank(f[key])) errors.push(`${name(key)} is empty`);
      }
    } else if (f.action === undefined) {
      missing ??= name('action');
    } else if (!(SNIPPET_ACTIONS as readonly string[]).includes(f.action)) {
      errors.push(`${name('action')} does not have a valid value`);
    }
    for (const key of ['file_path', 'previous_path'] as const) {
      if (f[key] !== undefined && !isBlank(f[key]) && !validFilePathParam(f[key]!)) errors.push(`${name(key)} ${INVALID_FILE_PATH}`);
    }
  });
  if (input.content !== undefined && isBlank(input.content)) errors.push('content is empty');
  if (creating && input.content !== undefined && input.file_name === undefined) missing ??= 'file_name';
  if (creating && input.content === undefined && input.files === undefined) {
    errors.push('files, content are missing, exactly one parameter must be provided');
  }
  if (missing !== undefined) throw missingAttribute(missing);
  if (errors.length > 0) throw invalidParams(errors);
}

function fileActions(files: FileParam[], creating: boolean): SnippetFileAction[] {
  return files.map((f) => ({
    action: creating ? 'create' : (f.action as SnippetFileAction['action']),
    ...(f.file_path !== undefined ? { filePath: f.file_path } : {}),
    ...(f.previous_path !== undefined ? { previousPath: f.previous_path } : {}),
    ...(f.content !== undefined ? { content: f.content } : {}),
  }));
}

/**
 * A refused write in the Service's words: the services' errors are rendered as
 * `render_api_error!({error: <full messages>}, status)` (lib/api/snippets.rb).
 */
function refusal(reason: SnippetFailure, verb: 'creating' | 'updating'): ApiError {
  switch (reason) {
    case 'not_found': return notFound('Snippet');
    case 'invalid_actions': return new ApiError(422, { message: { error: 'Snippet actions have invalid data' } });
    case 'multiple_files':
      return new ApiError(400, { message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' } });
    case 'file_name_too_long': return validationFailed({ error: 'File name is too long (maximum is 255 characters)' });
    // The Service commits through a hook that refuses a read-only repository, and SnippetRepository
    // turns any refused commit into a CommitError: the model error `repository: "Error … the
    // snippet"` without detail (Snippets::BaseService#repository_error_message).
    case 'read_only':
    case 'repository': return validationFailed({ error: `Repository Error ${verb} the snippet` });
  }
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

  async function readable(caller: Caller | null, id: number): Promise<SnippetRow> {
    const snippet = await findSnippetById(db, id);
    if (!snippet || !canOnSnippet(caller?.user ?? null, 'read_snippet', snippet)) throw notFound('Snippet');
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

  route(app, {
    method: 'POST', url: '/snippets', auth: 'required', params: createParams,
    schema: { summary: 'Create a personal snippet', tags: ['snippets'], response: { 201: OneSnippet } },
  }, async ({ request, reply, input, caller }) => {
    checkParams(input, true);
    // Snippets::CreateService's create_params: the first file names the row; no files is no content.
    const files = input.files !== undefined
      ? fileActions(input.files, true)
      : [{ action: 'create' as const, filePath: input.file_name, content: input.content }];
    if (files.length === 0) throw validationFailed({ error: "Content can't be blank" });
    // Creating, a level always comes back (the named one or default_snippet_visibility).
    const level = await allowedVisibility(caller.user, input.visibility, true) ?? visibilityLevel('private');
    const result = await createSnippet(db, config.storages, caller.user, {
      title: input.title, description: input.description ?? null, visibilityLevel: level, files,
    });
    if (!result.ok) throw refusal(result.reason, 'creating');
    reply.code(201);
    return present(request, reply, result.value);
  });

  route(app, {
    method: 'GET', url: '/snippets', auth: 'required', params: listParams,
    schema: {
      summary: "The caller's snippets", tags: ['snippets'],
      response: { 200: Type.Union([Type.Array(SnippetWithAdminSchema), Type.Array(SnippetSchema)]) },
    },
  }, async ({ request, reply, caller }) => {
    const rows = await paginate(db, request, reply, snippetsByAuthor(db, caller.user.id).orderBy('id', 'desc'));
    serializeWith(reply, isAdmin(request) ? serialize.SnippetsWithAdmin : serialize.Snippets);
    return Promise.all(rows.map((s) => presentOne(request, s)));
  });

  route(app, {
    method: 'GET', url: '/snippets/:id', auth: 'optional', params: idParams,
    schema: { summary: 'A single snippet', tags: ['snippets'], response: { 200: OneSnippet } },
  }, async ({ request, reply, input, caller }) => present(request, reply, await readable(caller, input.id)));

  route(app, {
    method: 'GET', url: '/snippets/:id/raw', auth: 'optional', params: idParams,
    schema: { summary: "A snippet's file, as text", tags: ['snippets'] },
  }, async ({ reply, input, caller }) => {
    const snippet = await readable(caller, input.id);
    return reply.type('text/plain').header('content-disposition', `inline; filename="${snippet.file_name.replace(/["\\\r\n]/g, '_')}"`).send(snippet.content);
  });

  route(app, {
    method: 'PUT', url: '/snippets/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a snippet', tags: ['snippets'], response: { 200: OneSnippet } },
  }, async ({ request, reply, input, caller }) => {
    checkParams(input, false);
    const snippet = await readable(caller, input.id);
    if (!canOnSnippet(caller.user, 'admin_snippet', snippet)) throw forbidden();
    const level = input.visibility && visibilityLevel(input.visibility) !== snippet.visibility_level
      ? await allowedVisibility(caller.user, input.visibility, false) : undefined;
    const result = await updateSnippet(db, config.storages, caller.user, snippet.id, {
      title: input.title, description: input.description, fileName: input.file_name, content: input.content,
      files: input.files !== undefined ? fileActions(input.files, false) : undefined,
      visibilityLevel: level,
    });
    if (!result.ok) throw refusal(result.reason, 'updating');
    return present(request, reply, result.value);
  });

  route(app, {
    method: 'DELETE', url: '/snippets/:id', auth: 'required', params: idParams,
    schema: { summary: 'Delete a snippet and its repository', tags: ['snippets'] },
  }, async ({ reply, input, caller }) => {
    const snippet = await readable(caller, input.id);
    if (!canOnSnippet(caller.user, 'admin_snippet', snippet)) throw forbidden();
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
