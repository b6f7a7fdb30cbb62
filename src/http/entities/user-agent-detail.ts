/**
 * Where an issue or a snippet was submitted from (lib/api/entities/user_agent_detail.rb), shown to
 * administrators at `…/user_agent_detail`, and the request origin it is recorded from.
 */
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { RequestOrigin, UserAgentDetailRow } from '../../domain/spam/user-agent-details.queries.ts';

export const UserAgentDetailSchema = Type.Object({
  user_agent: Type.String(),
  ip_address: Type.String(),
  akismet_submitted: Type.Boolean(),
}, { title: 'UserAgentDetail' });

export function presentUserAgentDetail(row: UserAgentDetailRow): Static<typeof UserAgentDetailSchema> {
  return { user_agent: row.user_agent, ip_address: row.ip_address, akismet_submitted: row.submitted === 1 };
}

/** The longest User-Agent kept (the header is bounded by the server's header limit; the record by this). */
const MAX_USER_AGENT = 1024;

/** The request's User-Agent and address, as UserAgentDetailService records them. */
export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers['user-agent'];
  return { userAgent: typeof userAgent === 'string' ? userAgent.slice(0, MAX_USER_AGENT) : '', ipAddress: request.ip };
}
