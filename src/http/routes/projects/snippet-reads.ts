/**
 * Reads of personal snippets beside snippets.ts (lib/api/snippets.rb): the public snippets of
 * everyone (`GET /snippets/public`, the Service's `Snippet.only_personal_snippets.are_public.fresh`,
 * newest first, for any signed-in user).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import { publicSnippets, snippetAuthors } from '../../../domain/snippets/snippets.queries.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { defineParams } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { presentSnippet, presentSnippetWithAdmin, SnippetSchema, SnippetWithAdminSchema } from '../../entities/snippet.ts';
import { route } from '../../route.ts';

const serialize = {
  Snippets: compileSerializer(Type.Array(SnippetSchema)),
  SnippetsWithAdmin: compileSerializer(Type.Array(SnippetWithAdminSchema)),
};

const listParams = defineParams({ ...paginationParams });

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
};

export default snippetReads;
