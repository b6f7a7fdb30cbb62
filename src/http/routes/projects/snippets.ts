/**
 * Personal snippets (CONTRACT §4; lib/api/snippets.rb): up to ten files, committed to the
 * snippet's own repository, written as `files` (`[{file_path, content}]`; on update
 * `[{action, file_path, previous_path, content}]`) or the older `file_name` + `content` of a
 * one-file snippet, with the Service's parameter rules (API::Helpers::SnippetsHelpers) and
 * messages (Snippets::BaseService). Reading follows the snippet policy (a snippet the caller may not see is 404
 * `404 Snippet Not Found`); changing and deleting take the author or an administrator (403).
 * Administrators also see `repository_storage`. While the snippet's repository moves to another
 * storage (read-only), changing its file and deleting it are refused.
 *
 * A project's snippets are served under their project only (project-snippets.ts), where the
 * project's policy and snippets feature level are asked: here they are 404. `GET /snippets` lists
 * them with the caller's personal snippets, as the Service does, where the caller can read them.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findUserAgentDetail } from '../../../domain/spam/user-agent-details.queries.ts';
import { presentUserAgentDetail, requestOrigin, UserAgentDetailSchema } from '../../entities/user-agent-detail.ts';
import { Type } from 'typebox';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { authorSnippetsQuery, findSnippetById } from '../../../domain/snippets/snippets.queries.ts';
import { reachOf } from '../../../domain/projects/project.finder.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { canOnSnippet } from '../../../domain/snippets/snippet.policy.ts';
import { createSnippet, deleteSnippet, updateSnippet } from '../../../domain/snippets/create-snippet.ts';
import { VISIBILITY_LEVELS, visibilityLevel } from '../../../domain/permissions/access.ts';
import { conflict, forbidden, notFound, validationFailed } from '../../errors.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { presentSnippet, presentSnippetWithAdmin, SnippetSchema, SnippetWithAdminSchema } from '../../entities/snippet.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';
import {
  allowedVisibility, checkSnippetParams, createSnippetProps, createSnippetRules, fileActions, snippetRefusal, updateSnippetProps,
  updateSnippetRules,
} from './snippet-input.ts';

const serialize = {
  Snippet: compileSerializer(SnippetSchema),
  SnippetWithAdmin: compileSerializer(SnippetWithAdminSchema),
  Snippets: compileSerializer(Type.Array(SnippetSchema)),
  SnippetsWithAdmin: compileSerializer(Type.Array(SnippetWithAdminSchema)),
};
/** Administrators also see the repository's shard (PersonalSnippetWithAdmin). */
const OneSnippet = Type.Union([SnippetWithAdminSchema, SnippetSchema]);

const createParams = defineParams(createSnippetProps, createSnippetRules);
const idParams = defineParams({ id: P.integer() });
const updateParams = defineParams({ id: P.integer(), ...updateSnippetProps }, updateSnippetRules);
const listParams = defineParams({ ...paginationParams });

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
    // A project's snippet is read and changed under its project (project-snippets.ts), where its policy is asked.
    if (!snippet || snippet.project_id !== null || !canOnSnippet(caller?.user ?? null, 'read_snippet', snippet)) throw notFound('Snippet');
    return snippet;
  }

  route(app, {
    method: 'POST', url: '/snippets', auth: 'required', params: createParams,
    schema: { summary: 'Create a personal snippet', tags: ['snippets'], response: { 201: OneSnippet } },
  }, async ({ request, reply, input, caller }) => {
    checkSnippetParams(input, true);
    // Snippets::CreateService's create_params: the first file names the row; no files is no content.
    const files = input.files != null
      ? fileActions(input.files, true)
      : [{ action: 'create' as const, filePath: input.file_name, content: input.content }];
    if (files.length === 0) throw validationFailed({ error: "Content can't be blank" });
    // Creating, a level always comes back (the named one or default_snippet_visibility).
    const level = await allowedVisibility(db, caller.user, input.visibility, true) ?? visibilityLevel('private');
    const result = await createSnippet(db, config.storages, caller.user, {
      title: input.title, description: input.description ?? null, visibilityLevel: level, files, origin: requestOrigin(request),
    });
    if (!result.ok) throw snippetRefusal(result.reason, 'creating');
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
    const user = caller.user;
    const reach = user.admin === 1 ? 'admin' as const : await reachOf(db, user).then((r) => ({
      minVisible: user.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal,
      projectIds: [...r.projects.keys()], groupIds: [...r.groups.keys()],
    }));
    const rows = await paginate(db, request, reply, authorSnippetsQuery(db, user.id, reach).orderBy('id', 'desc'));
    // The project snippets among them are shown at their project's URLs.
    const projects = await findProjectsByIds(db, [...new Set(rows.map((s) => s.project_id).filter((id) => id !== null))]);
    const namespaces = await namespacePathsById(db, [...new Set(projects.map((p) => p.namespace_id))]);
    const fullPaths = new Map(projects.map((p) => [p.id, `${namespaces.get(p.namespace_id)?.fullPath}/${p.path}`]));
    serializeWith(reply, isAdmin(request) ? serialize.SnippetsWithAdmin : serialize.Snippets);
    return rows.map((s) => (isAdmin(request) ? presentSnippetWithAdmin : presentSnippet)(
      s, user, externalUrl, s.project_id === null ? undefined : fullPaths.get(s.project_id),
    ));
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
    checkSnippetParams(input, false);
    const snippet = await readable(caller, input.id);
    if (!canOnSnippet(caller.user, 'admin_snippet', snippet)) throw forbidden();
    const level = input.visibility && visibilityLevel(input.visibility) !== snippet.visibility_level
      ? await allowedVisibility(db, caller.user, input.visibility, false) : undefined;
    const result = await updateSnippet(db, config.storages, caller.user, snippet.id, {
      title: input.title, description: input.description, fileName: input.file_name, content: input.content,
      files: input.files != null ? fileActions(input.files, false) : undefined,
      visibilityLevel: level,
    });
    if (!result.ok) throw snippetRefusal(result.reason, 'updating');
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

  route(app, {
    method: 'GET', url: '/snippets/:id/user_agent_detail', auth: 'required', params: idParams,
    schema: {
      summary: 'Where a personal snippet was submitted from (administrators)', tags: ['snippets'],
      response: { 200: UserAgentDetailSchema },
    },
  }, async ({ input, caller }) => {
    // authenticated_as_admin! first; then the snippet, then its detail (404 UserAgentDetail Not Found).
    if (caller.user.admin !== 1) throw forbidden();
    const snippet = await readable(caller, input.id);
    const detail = await findUserAgentDetail(db, 'Snippet', snippet.id);
    if (!detail) throw notFound('UserAgentDetail');
    return presentUserAgentDetail(detail);
  });
};

export default snippets;
