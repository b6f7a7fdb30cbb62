/**
 * CORS on the endpoints browsers' JavaScript may call (spec, OAuth 2.0 provider: since 15.1 only
 * `Authorization` is allowed beyond the simple-request headers, X-Requested-With is not), as the
 * Service's rack-cors rules answer: any origin, no credentials, preflights cached 7200 s, and no
 * CORS headers at all when a preflight asks for a method or header outside the rule. The
 * authorization endpoint gets none (RFC 9700 §2.6: CORS MUST NOT be enabled there).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CorsRule {
  methods: string[];
  /** Request headers allowed besides the CORS-safelisted ones, lower case. */
  headers: string[];
}

/** Headers a simple request may carry (Fetch standard, CORS-safelisted request headers). */
const SIMPLE_HEADERS = ['accept', 'accept-language', 'content-language', 'content-type'];

export const TOKEN_CORS: CorsRule = { methods: ['POST', 'OPTIONS'], headers: ['authorization'] };
export const USERINFO_CORS: CorsRule = { methods: ['GET', 'HEAD', 'POST', 'OPTIONS'], headers: ['authorization'] };
export const TOKEN_INFO_CORS: CorsRule = { methods: ['GET', 'HEAD', 'OPTIONS'], headers: ['authorization'] };
export const DISCOVERY_CORS: CorsRule = { methods: ['GET', 'HEAD'], headers: [] };

/** Headers for an actual (non-preflight) cross-origin request. */
export function applyCors(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): void {
  if (!request.headers.origin) return;
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-allow-methods', rule.methods.join(', '));
  reply.header('access-control-max-age', '7200');
}

/** Answers a preflight: 200, empty, with CORS headers only when the rule allows what is asked. */
export function answerPreflight(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): FastifyReply {
  const origin = request.headers.origin;
  const method = request.headers['access-control-request-method'];
  const asked = request.headers['access-control-request-headers'];
  const requested = typeof asked === 'string' ? asked.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean) : [];
  const allowedHeaders = new Set([...SIMPLE_HEADERS, ...rule.headers]);
  const ok = typeof origin === 'string' && typeof method === 'string' && rule.methods.includes(method.toUpperCase())
    && requested.every((h) => allowedHeaders.has(h));
  if (ok) {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-allow-methods', rule.methods.join(', '));
    if (requested.length > 0) reply.header('access-control-allow-headers', requested.join(', '));
    reply.header('access-control-max-age', '7200');
  }
  return reply.code(200).header('content-type', 'text/plain').send('');
}
