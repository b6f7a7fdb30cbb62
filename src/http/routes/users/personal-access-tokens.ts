/**
 * Personal access tokens (lib/api/personal_access_tokens.rb): users list, read and revoke their
 * own; administrators every user's, optionally filtered by user. `self` is the token the request
 * authenticated with. Who learns what follows the Service: a non-administrator asking for a token
 * that is not theirs (or does not exist) gets 401, an administrator 404; revoking a token one may
 * not revoke is 400.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PersonalAccessTokenRow } from '../../../db/types.ts';
import { todayDate } from '../../../domain/clock.ts';
import {
  findPersonalAccessTokenById, revokePersonalAccessToken, tokensQuery, type TokenFilters,
} from '../../../domain/tokens/tokens.queries.ts';
import { idFromText, isStorableId } from '../../../db/constraints.ts';
import { badRequest, notFound, recordNotFound, unauthorized } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { PersonalAccessTokenSchema, presentPersonalAccessToken } from '../../entities/personal-access-token.ts';
import { auditUser } from '../../audit.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const params = {
  list: defineParams({
    user_id: P.optional(P.integer({ description: "only this user's tokens (others' for administrators only)" })),
    state: P.optional(P.oneOf(['active', 'inactive'] as const, { description: 'active or inactive' })),
    revoked: P.optional(P.boolean({ description: 'only revoked (true) or unrevoked (false) tokens' })),
    ...paginationParams,
  }),
  // `:id` is not declared in the Service: any text is looked up (ActiveRecord's cast), so none is refused with 400.
  one: defineParams({ id: P.string({ maxLength: 1024, description: 'token id' }) }),
};

const tags = ['personal_access_tokens'];

const personalAccessTokens: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  /** The personal access or impersonation token this request authenticated with, if any. */
  async function currentToken(caller: Caller): Promise<PersonalAccessTokenRow> {
    const credential = caller.credential;
    const kind = credential.kind;
    const row = kind === 'personal_access_token' || kind === 'impersonation_token'
      ? await findPersonalAccessTokenById(db, credential.id) : undefined;
    if (!row) throw notFound();
    return row;
  }

  async function revoke(request: FastifyRequest, reply: FastifyReply, caller: Caller, token: PersonalAccessTokenRow) {
    const user = caller.user;
    const owner = await findUserById(db, token.user_id);
    // PersonalAccessTokens::RevokeService: one's own tokens, or any token for an administrator. Its
    // EE part audits the attempt on the token's owner either way, in the same words for every kind
    // of token; the route answers a refusal with a bare 400.
    if (user.admin !== 1 && token.user_id !== user.id) {
      const attempt = `Attempted to revoke personal access token with id ${token.id} but failed with message: Not permitted to revoke`;
      if (owner) await auditUser(request, owner, attempt);
      throw badRequest();
    }
    await revokePersonalAccessToken(db, token.id);
    if (owner) await auditUser(request, owner, `Revoked personal access token with id ${token.id}`);
    return reply.code(204).send();
  }

  route(app, {
    method: 'GET', url: '/personal_access_tokens', auth: 'required', params: params.list,
    schema: {
      summary: 'Personal access tokens: own ones, or every user\'s for administrators',
      tags,
      response: { 200: Type.Array(PersonalAccessTokenSchema) },
    },
  }, async ({ request, reply, input, caller }) => {
    const user = caller.user;
    const filters: TokenFilters = {};
    if (input.state) filters.state = input.state;
    if (typeof input.revoked === 'boolean') filters.revoked = input.revoked;
    const userId = typeof input.user_id === 'number' ? input.user_id : undefined;
    if (user.admin === 1) {
      if (userId !== undefined) {
        // An unknown user has no tokens (isStorableId keeps the filter inside the column's range).
        filters.userId = isStorableId(userId) ? userId : 0;
      }
    } else {
      if (userId !== undefined && userId !== user.id) throw unauthorized();
      // Users see their personal access tokens; impersonation tokens stay administrators' business.
      filters.userId = user.id;
      filters.impersonation = false;
    }
    const now = new Date();
    const rows = await paginate(db, request, reply, tokensQuery(db, filters, todayDate(now)));
    return rows.map((row) => presentPersonalAccessToken(row, now));
  });

  route(app, {
    method: 'GET', url: '/personal_access_tokens/self', auth: 'required',
    schema: { summary: 'The token this request authenticated with', tags, response: { 200: PersonalAccessTokenSchema } },
  }, async ({ caller }) => presentPersonalAccessToken(await currentToken(caller)));

  route(app, {
    method: 'GET', url: '/personal_access_tokens/:id', auth: 'required', params: params.one,
    schema: { summary: 'One personal access token', tags, response: { 200: PersonalAccessTokenSchema } },
  }, async ({ input, caller }) => {
    const user = caller.user;
    const id = idFromText(input.id);
    const token = id === null ? undefined : await findPersonalAccessTokenById(db, id);
    if (token && (user.admin === 1 || token.user_id === user.id)) return presentPersonalAccessToken(token);
    // Only administrators learn whether a token exists.
    throw user.admin === 1 ? notFound() : unauthorized();
  });

  route(app, {
    method: 'DELETE', url: '/personal_access_tokens/self', auth: 'required',
    schema: { summary: 'Revokes the token this request authenticated with', tags },
  }, async ({ request, reply, caller }) => revoke(request, reply, caller, await currentToken(caller)));

  route(app, {
    method: 'DELETE', url: '/personal_access_tokens/:id', auth: 'required', params: params.one,
    schema: { summary: 'Revokes a personal access token (own ones; any for administrators)', tags },
  }, async ({ request, reply, input, caller }) => {
    const id = idFromText(input.id);
    const token = id === null ? undefined : await findPersonalAccessTokenById(db, id);
    // PersonalAccessToken.find: ActiveRecord's RecordNotFound (reference §6.2).
    if (!token) throw recordNotFound();
    return revoke(request, reply, caller, token);
  });
};

export default personalAccessTokens;
