/**
 * A project's snippets (lib/api/project_snippets.rb, 15.2; doc/api/project_snippets.md): the same
 * snippets as the personal ones (files in the snippet's own repository, the same parameters and
 * refusals, snippet-input.ts) under `/projects/:id/snippets`. Every route first needs the project
 * (404 `Project`) and its snippets feature (check_snippets_enabled: 403 when disabled, or private
 * and the caller no member). A snippet the caller may not read is 404 `Snippet`
 * (ProjectSnippetPolicy, project-snippet.policy.ts); writing one takes Reporter (create_snippet),
 * changing or deleting it its author or a Maintainer (403). Creating one keeps the request's user
 * agent and address for administrators (`/user_agent_detail`).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { findProjectSnippet, projectSnippetsQuery, snippetAuthors } from '../../../domain/snippets/snippets.queries.ts';
import { canOnProjectSnippet, type ProjectSnippetAction } from '../../../domain/snippets/project-snippet.policy.ts';
import { createSnippet, deleteSnippet, updateSnippet } from '../../../domain/snippets/create-snippet.ts';
import { findUserAgentDetail } from '../../../domain/spam/user-agent-details.queries.ts';
import { presentUserAgentDetail, requestOrigin, UserAgentDetailSchema } from '../../entities/user-agent-detail.ts';
import { ACCESS_LEVELS, VISIBILITIES, VISIBILITY_LEVELS, visibilityLevel } from '../../../domain/permissions/access.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { conflict, forbidden, invalidParams, notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { INVALID_FILE_PATH, validFilePathParam } from '../../input/file-path-param.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { presentProjectSnippet, ProjectSnippetSchema } from '../../entities/snippet.ts';
import { route } from '../../route.ts';
import {
  allowedVisibility, checkSnippetParams, createSnippetProps, createSnippetRules, fileActions, snippetRefusal, updateSnippetProps,
  updateSnippetRules,
} from './snippet-input.ts';
import { sendSnippetFile } from './snippet-files.ts';

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const snippetParams = defineParams({ ...idParam, snippet_id: P.integer() });
const listParams = defineParams({ ...idParam, ...paginationParams });
// A project snippet names its visibility (lib/api/project_snippets.rb: `requires :visibility`).
const createParams = defineParams({ ...idParam, ...createSnippetProps, visibility: P.oneOf(VISIBILITIES) }, createSnippetRules);
const updateParams = defineParams({ ...idParam, snippet_id: P.integer(), ...updateSnippetProps }, updateSnippetRules);
const rawFileParams = defineParams({
  ...idParam,
  snippet_id: P.integer(),
  ref: P.string({ maxLength: 1024, description: 'a branch, tag or commit' }),
  file_path: P.string({ maxLength: MAX_FILE_PATH_BYTES, description: 'URL-encoded, like dir%2Ffile.rb' }),
});


const projectSnippets: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  /** The project, with its snippets feature available to the caller (check_snippets_enabled). */
  async function loadSnippetsProject(request: FastifyRequest, id: string): Promise<ProjectContext> {
    const ctx = await loadProject(request, id);
    if (!canOnProject(ctx.actor, 'read_snippet', ctx.project)) throw forbidden();
    return ctx;
  }

  /** The project's snippet `snippetId` if the caller may `action` it: 404 unless readable, then 403. */
  async function snippetOf(ctx: ProjectContext, snippetId: number, action: ProjectSnippetAction = 'read_snippet') {
    const snippet = isStorableId(snippetId) ? await findProjectSnippet(db, ctx.project.id, snippetId) : undefined;
    if (!snippet || !canOnProjectSnippet(ctx.actor, 'read_snippet', ctx.project, snippet)) throw notFound('Snippet');
    if (!canOnProjectSnippet(ctx.actor, action, ctx.project, snippet)) throw forbidden();
    return snippet as SnippetRow & { project_id: number };
  }

  async function present(ctx: ProjectContext, s: SnippetRow & { project_id: number }) {
    const author = (await findUserById(db, s.author_id))!;
    return presentProjectSnippet(s, author, externalUrl, fullPathOf(ctx));
  }

  route(app, {
    method: 'GET', url: '/projects/:id/snippets', auth: 'required', params: listParams,
    schema: { summary: "A project's snippets", tags: ['project_snippets'], response: { 200: Type.Array(ProjectSnippetSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    // SnippetsFinder for one project: members and administrators see them all; others those
    // their visibility shows them (public; internal unless external) and their own.
    const member = caller.user.admin === 1 || ctx.actor.accessLevel >= ACCESS_LEVELS.guest;
    const levels = caller.user.external ? [VISIBILITY_LEVELS.public] : [VISIBILITY_LEVELS.public, VISIBILITY_LEVELS.internal];
    const query = projectSnippetsQuery(db, ctx.project.id, member ? 'all' : { levels, authorId: caller.user.id });
    const rows = await paginate(db, request, reply, query.orderBy('id', 'desc'));
    const authors = await snippetAuthors(db, rows);
    const at = fullPathOf(ctx);
    return rows.map((s) => presentProjectSnippet({ ...s, project_id: ctx.project.id }, authors.get(s.author_id)!, externalUrl, at));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id', auth: 'optional', params: snippetParams,
    schema: { summary: 'A single project snippet', tags: ['project_snippets'], response: { 200: ProjectSnippetSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    return present(ctx, await snippetOf(ctx, input.snippet_id));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/snippets', auth: 'required', params: createParams,
    schema: { summary: 'Create a project snippet', tags: ['project_snippets'], response: { 201: ProjectSnippetSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    authorizeProject(ctx, 'create_snippet');
    checkSnippetParams(input, true);
    const files = input.files != null
      ? fileActions(input.files, true)
      : [{ action: 'create' as const, filePath: input.file_name, content: input.content }];
    if (files.length === 0) throw validationFailed({ error: "Content can't be blank" });
    const level = await allowedVisibility(db, caller.user, input.visibility, true) ?? visibilityLevel(input.visibility);
    const result = await createSnippet(db, config.storages, caller.user, {
      title: input.title, description: input.description ?? null, visibilityLevel: level, files, projectId: ctx.project.id,
      origin: requestOrigin(request),
    });
    if (!result.ok) throw snippetRefusal(result.reason, 'creating');
    reply.code(201);
    return present(ctx, { ...result.value, project_id: ctx.project.id });
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/snippets/:snippet_id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a project snippet', tags: ['project_snippets'], response: { 200: ProjectSnippetSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    checkSnippetParams(input, false);
    const snippet = await snippetOf(ctx, input.snippet_id, 'update_snippet');
    const level = input.visibility && visibilityLevel(input.visibility) !== snippet.visibility_level
      ? await allowedVisibility(db, caller.user, input.visibility, false) : undefined;
    const result = await updateSnippet(db, config.storages, caller.user, snippet.id, {
      title: input.title, description: input.description, fileName: input.file_name, content: input.content,
      files: input.files != null ? fileActions(input.files, false) : undefined,
      visibilityLevel: level,
    });
    if (!result.ok) throw snippetRefusal(result.reason, 'updating');
    return present(ctx, { ...result.value, project_id: ctx.project.id });
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/snippets/:snippet_id', auth: 'required', params: snippetParams,
    schema: { summary: 'Delete a project snippet and its repository', tags: ['project_snippets'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    const snippet = await snippetOf(ctx, input.snippet_id, 'admin_snippet');
    checkUnmodifiedSince(request, snippet.updated_at);
    const result = await deleteSnippet(db, config.storages, snippet.id);
    if (!result.ok) {
      if (result.reason === 'not_found') throw notFound('Snippet');
      throw conflict(READ_ONLY_MESSAGE);
    }
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/raw', auth: 'optional', params: snippetParams,
    schema: { summary: "A project snippet's file, as text", tags: ['project_snippets'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    const snippet = await snippetOf(ctx, input.snippet_id);
    return sendText(reply, snippet);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw', auth: 'optional', params: rawFileParams,
    schema: { summary: 'One file of a project snippet at a ref, raw', tags: ['project_snippets'] },
  }, async ({ request, reply, input }) => {
    if (!validFilePathParam(input.file_path)) throw invalidParams([`file_path ${INVALID_FILE_PATH}`]);
    const ctx = await loadSnippetsProject(request, input.id);
    const snippet = await snippetOf(ctx, input.snippet_id);
    return sendSnippetFile(reply, config.storages, snippet, input.ref, input.file_path);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/user_agent_detail', auth: 'required', params: snippetParams,
    schema: {
      summary: 'Where a project snippet was submitted from (administrators)', tags: ['project_snippets'],
      response: { 200: UserAgentDetailSchema },
    },
  }, async ({ request, input, caller }) => {
    const ctx = await loadSnippetsProject(request, input.id);
    // authenticated_as_admin!, then Snippet.find_by!(id:, project_id:) (ActiveRecord's 404 Not found).
    if (caller.user.admin !== 1) throw forbidden();
    const snippet = isStorableId(input.snippet_id) ? await findProjectSnippet(db, ctx.project.id, input.snippet_id) : undefined;
    if (!snippet) throw recordNotFound();
    const detail = await findUserAgentDetail(db, 'Snippet', snippet.id);
    if (!detail) throw notFound('UserAgentDetail');
    return presentUserAgentDetail(detail);
  });
};

/** The project's `path_with_namespace`. */
const fullPathOf = (ctx: ProjectContext) => `${ctx.namespace.fullPath}/${ctx.project.path}`;

/** The snippet's first file as text (the Service's content_for), as the personal snippets' /raw answers. */
function sendText(reply: FastifyReply, snippet: SnippetRow) {
  return reply.type('text/plain').header('content-disposition', `inline; filename="${snippet.file_name.replace(/["\\\r\n]/g, '_')}"`)
    .send(snippet.content);
}

export default projectSnippets;
