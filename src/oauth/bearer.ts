/** The access token of a request to a protected OAuth endpoint: the Service's access_token_methods. */
import type { FastifyRequest } from 'fastify';
import { oauthParams } from './params.ts';

export function bearerToken(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  if (m) return m[1];
  const param = oauthParams(request);
  return param('access_token') ?? param('bearer_token');
}
