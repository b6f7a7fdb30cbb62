/**
 * The token endpoint's success body (spec, OAuth token response; Doorkeeper's TokenResponse):
 * access_token, token_type "Bearer", expires_in, refresh_token (when issued), scope,
 * created_at (Unix seconds), and id_token when the `openid` scope was granted to a client.
 * RFC 6749 §5.1: never cached.
 */
import type { FastifyReply } from 'fastify';
import type { UserRow } from '../db/types.ts';
import type { IssuedToken } from '../domain/oauth/issue-access-token.ts';
import { loadGroupClaims } from './group-claims.ts';
import { signIdToken } from './id-token.ts';
import type { OAuthServer } from './server.ts';

export interface TokenResponseBody {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  created_at: number;
  id_token?: string;
}

export async function tokenResponseBody(
  server: OAuthServer,
  issued: IssuedToken,
  o: { user: UserRow; clientUid: string | null; nonce: string | null },
): Promise<TokenResponseBody> {
  const createdAt = new Date(issued.row.created_at);
  const scopes = issued.row.scopes.split(' ').filter(Boolean);
  const body: TokenResponseBody = {
    access_token: issued.accessToken,
    token_type: 'Bearer',
    expires_in: issued.row.expires_in ?? 0,
    ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
    scope: scopes.join(' '),
    created_at: Math.floor(createdAt.getTime() / 1000),
  };
  if (scopes.includes('openid') && o.clientUid) {
    const { groupsDirect } = await loadGroupClaims(server.ctx.db, o.user.id);
    const idTokenKeys = { issuer: server.issuer, externalUrl: server.ctx.config.externalUrl, secretKeyBase: server.ctx.secretKeyBase };
    body.id_token = await signIdToken(server.keys.oidc, idTokenKeys, {
      user: o.user, clientUid: o.clientUid, scopes, nonce: o.nonce, issuedAt: new Date(), groupsDirect,
    });
  }
  return body;
}

export function sendTokenResponse(reply: FastifyReply, body: TokenResponseBody): FastifyReply {
  return reply.code(200)
    .header('cache-control', 'no-store, no-cache')
    .header('pragma', 'no-cache')
    .type('application/json')
    .send(JSON.stringify(body));
}
