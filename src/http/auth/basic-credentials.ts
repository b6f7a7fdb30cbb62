/**
 * HTTP Basic credentials (RFC 7617) of a request: the username and password, split at the first
 * colon, or null when the header is not Basic or not decodable. Git over HTTP and the package
 * registry read a token as the password.
 */
import type { FastifyRequest } from 'fastify';

export function basicCredentials(request: FastifyRequest): { username: string; password: string } | null {
  const header = request.headers.authorization;
  const m = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
