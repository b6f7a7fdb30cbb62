/**
 * Tokens administrators manage for a user (spec, Tokens; reference §2.4, §2.5): impersonation
 * tokens (list by state, show, create showing the secret once, revoke) and personal access tokens
 * created on a user's behalf. These resources check the administrator in a before-hook, so a
 * non-administrator gets 403 before any parameter is validated.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { TOKEN_SCOPES } from '../../../domain/auth/scopes.ts';
import { todayDate } from '../../../domain/clock.ts';
import { createToken, fullMessagesSentence } from '../../../domain/tokens/create-token.ts';
import { findImpersonationToken, revokePersonalAccessToken, tokensQuery } from '../../../domain/tokens/tokens.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, unprocessable, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import {
  ImpersonationTokenSchema, ImpersonationTokenWithTokenSchema, PersonalAccessTokenWithTokenSchema,
  presentImpersonationToken, presentPersonalAccessToken,
} from '../../entities/personal-access-token.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { auditUser } from '../../audit.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { route } from '../../route.ts';

const userId = P.integer({ description: 'user id' });
const tokenId = P.integer({ description: 'impersonation token id' });
const tokenFields = {
  // PersonalAccessToken's name: at most 255 characters (issue 13).
  name: P.name({ description: 'token name' }),
  expires_at: P.optional(P.date({ description: 'expiry date, YYYY-MM-DD' })),
};

const params = {
  list: defineParams({
    user_id: userId,
    state: P.optional(P.oneOf(['all', 'active', 'inactive'] as const, { default: 'all', description: 'all, active or inactive' })),
    ...paginationParams,
  }),
  one: defineParams({ user_id: userId, impersonation_token_id: tokenId }),
  // Impersonation scopes are checked by the model (400 message object), not by the parameter.
  createImpersonation: defineParams({
    user_id: userId, ...tokenFields,
    scopes: P.array(P.string(), { commaSeparated: true, description: 'scopes, an array or comma-separated' }),
  }),
  // Personal access token scopes are a parameter with `values:` (reference §2.5).
  createPersonal: defineParams({
    user_id: userId, ...tokenFields,
    scopes: P.array(P.oneOf(TOKEN_SCOPES), { commaSeparated: true, description: 'scopes, an array or comma-separated' }),
  }),
};

const tags = ['tokens'];

async function adminOnly(request: FastifyRequest): Promise<void> {
  authenticatedAsAdmin(request);
}

const userTokens: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function impersonationTokenOr404({ user_id, impersonation_token_id }: { user_id: number; impersonation_token_id: number }) {
    const user = await userOr404(db, user_id);
    const token = await findImpersonationToken(db, user.id, impersonation_token_id);
    if (!token) throw notFound('Impersonation Token');
    return token;
  }

  route(app, {
    method: 'GET', url: '/users/:user_id/impersonation_tokens', auth: 'required', scopes: ['read_user'], params: params.list,
    preValidation: adminOnly,
    schema: { summary: "A user's impersonation tokens (administrators)", tags, response: { 200: Type.Array(ImpersonationTokenSchema) } },
  }, async ({ request, reply, input }) => {
    const { user_id, state } = input;
    const user = await userOr404(db, user_id);
    const now = new Date();
    const query = tokensQuery(db, { userId: user.id, impersonation: true, ...(state === 'all' ? {} : { state }) }, todayDate(now));
    const rows = await paginate(db, request, reply, query);
    return rows.map((row) => presentImpersonationToken(row, now));
  });

  route(app, {
    method: 'GET',
    url: '/users/:user_id/impersonation_tokens/:impersonation_token_id',
    auth: 'required',
    scopes: ['read_user'],
    params: params.one,
    preValidation: adminOnly,
    schema: { summary: 'One impersonation token (administrators)', tags, response: { 200: ImpersonationTokenSchema } },
  }, async ({ input }) => presentImpersonationToken(await impersonationTokenOr404(input)));

  route(app, {
    method: 'POST', url: '/users/:user_id/impersonation_tokens', auth: 'required', params: params.createImpersonation,
    preValidation: adminOnly,
    schema: {
      summary: 'Creates an impersonation token; the secret is shown only here',
      tags,
      response: { 201: ImpersonationTokenWithTokenSchema },
    },
  }, async ({ request, reply, input }) => {
    const user = await userOr404(db, input.user_id);
    const result = await createToken(db, user, {
      name: input.name, scopes: input.scopes ?? [], expiresAt: input.expires_at ?? null, impersonation: true,
    });
    if (!result.ok) throw validationFailed(result.errors);
    await auditUser(request, user, `Created impersonation token with id ${result.value.row.id}`);
    reply.code(201);
    return { ...presentImpersonationToken(result.value.row), token: result.value.token };
  });

  route(app, {
    method: 'DELETE', url: '/users/:user_id/impersonation_tokens/:impersonation_token_id', auth: 'required', params: params.one,
    preValidation: adminOnly,
    schema: { summary: 'Revokes an impersonation token (the row stays, listed as inactive)', tags },
  }, async ({ request, reply, input }) => {
    const token = await impersonationTokenOr404(input);
    checkUnmodifiedSince(request, token.updated_at);
    await revokePersonalAccessToken(db, token.id);
    const owner = await findUserById(db, token.user_id);
    if (owner) await auditUser(request, owner, `Revoked impersonation token with id ${token.id}`);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/users/:user_id/personal_access_tokens', auth: 'required', params: params.createPersonal,
    preValidation: adminOnly,
    schema: {
      summary: 'Creates a personal access token for a user; the secret is shown only here',
      tags,
      response: { 201: PersonalAccessTokenWithTokenSchema },
    },
  }, async ({ request, reply, input }) => {
    const user = await userOr404(db, input.user_id);
    const result = await createToken(db, user, {
      name: input.name, scopes: input.scopes ?? [], expiresAt: input.expires_at ?? null, impersonation: false,
    });
    // The Service's CreateService reports the model's errors as one sentence with 422 (reference §2.5).
    if (!result.ok) throw unprocessable(fullMessagesSentence(result.errors));
    await auditUser(request, user, `Created personal access token with id ${result.value.row.id}`);
    reply.code(201);
    return { ...presentPersonalAccessToken(result.value.row), token: result.value.token };
  });
};

export default userTokens;
