/**
 * Reads of personal snippets beside snippets.ts (lib/api/snippets.rb): the public snippets of
 * everyone (`GET /snippets/public`, the Service's `Snippet.only_personal_snippets.are_public.fresh`,
 * newest first, for any signed-in user), and one file of a snippet at a ref, raw
 * (`GET /snippets/:id/files/:ref/:file_path/raw`, the `file_path` URL-encoded; the Service's
 * file_content_for: `404 Snippet`, `404 Reference`, `404 File` Not Found).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import { findSnippetById, publicSnippets, snippetAuthors } from '../../../domain/snippets/snippets.queries.ts';
import { canOnSnippet } from '../../../domain/snippets/snippet.policy.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { sendSnippetFile } from './snippet-files.ts';
import { invalidParams, notFound } from '../../errors.ts';
import { INVALID_FILE_PATH, validFilePathParam } from '../../input/file-path-param.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { presentSnippet, presentSnippetWithAdmin, SnippetSchema, SnippetWithAdminSchema } from '../../entities/snippet.ts';
import { route } from '../../route.ts';

const serialize = {
  Snippets: compileSerializer(Type.Array(SnippetSchema)),
  SnippetsWithAdmin: compileSerializer(Type.Array(SnippetWithAdminSchema)),
};

const listParams = defineParams({ ...paginationParams });
const rawFileParams = defineParams({
  id: P.integer(),
  ref: P.string({ maxLength: 1024, description: 'a branch, tag or commit' }),
  file_path: P.string({ maxLength: MAX_FILE_PATH_BYTES, description: 'URL-encoded, like dir%2Ffile.rb' }),
});

const snippetReads: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  async function presentPage(request: FastifyRequest, rows: SnippetRow[]) {
    const authors = await snippetAuthors(db, rows);
    const admin = request.caller?.user.admin === 1;
    return rows.map((s) => (admin ? presentSnippetWithAdmin : presentSnippet)(s, authors.get(s.author_id)!, externalUrl));
  }

  route(app, {
    method: 'GET', url: '/snippets/public', auth: 'required', params: listParams,
    schema: {
      summary: 'Every public personal snippet, newest first', tags: ['snippets'],
      response: { 200: Type.Union([Type.Array(SnippetWithAdminSchema), Type.Array(SnippetSchema)]) },
    },
  }, async ({ request, reply, caller }) => {
    const rows = await paginate(db, request, reply, publicSnippets(db).orderBy('id', 'desc'));
    serializeWith(reply, caller.user.admin === 1 ? serialize.SnippetsWithAdmin : serialize.Snippets);
    return presentPage(request, rows);
  });

  route(app, {
    method: 'GET', url: '/snippets/:id/files/:ref/:file_path/raw', auth: 'optional', params: rawFileParams,
    schema: { summary: 'One file of a snippet at a ref, raw', tags: ['snippets'] },
  }, async ({ reply, input, caller }) => {
    if (!validFilePathParam(input.file_path)) throw invalidParams([`file_path ${INVALID_FILE_PATH}`]);
    const snippet = await findSnippetById(db, input.id);
    if (!snippet || snippet.project_id !== null || !canOnSnippet(caller?.user ?? null, 'read_snippet', snippet)) throw notFound('Snippet');
    return sendSnippetFile(reply, config.storages, snippet, input.ref, input.file_path);
  });
};

export default snippetReads;
