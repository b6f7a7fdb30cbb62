/**
 * What the GraphQL routes decide before any GraphQL code runs: refusals with their status, the
 * request's parameters, and the Service's timeout. Kept apart from engine.ts so that reading them
 * does not load graphql-js.
 */
import type { FastifyReply } from 'fastify';

/** The Service's limit on a query's text (GraphqlController#limit_query_size: 10,000 characters). */
export const MAX_QUERY_SIZE = 10_000;

/** A refusal decided before execution, answered as `{"errors":[{"message"}]}` with its status. */
export class Refusal extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

export interface GraphqlParams { query: string; variables: Record<string, unknown> | null; operationName: string | null }

export function sendErrors(reply: FastifyReply, status: number, messages: string[]): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify({ errors: messages.map((message) => ({ message })) }));
}

/** `{query, variables, operationName}` from the JSON body or the query string; variables may be JSON text. */
export function readParams(raw: Record<string, unknown> | null | undefined, sizeChecked = false): GraphqlParams {
  const source = raw && typeof raw === 'object' && !Buffer.isBuffer(raw) ? raw : {};
  const query = source.query;
  if (query !== undefined && typeof query !== 'string') throw new Refusal(422, 'query must be a string');
  if (!sizeChecked && typeof query === 'string' && query.length > MAX_QUERY_SIZE) throw new Refusal(422, 'Query too large');
  let variables = source.variables;
  if (typeof variables === 'string') {
    if (variables.length > MAX_QUERY_SIZE * 100) throw new Refusal(422, 'Variables too large');
    try {
      variables = variables === '' ? null : JSON.parse(variables);
    } catch (err) {
      throw new Refusal(422, `Unexpected token in variables: ${(err as Error).message}`);
    }
  }
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    throw new Refusal(422, `Unexpected parameter: ${JSON.stringify(variables).slice(0, 100)}`);
  }
  const operationName = source.operationName;
  if (operationName !== undefined && operationName !== null && (typeof operationName !== 'string' || operationName.length > 1024)) {
    throw new Refusal(422, 'operationName must be a string');
  }
  return {
    query: query ?? '', variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    operationName: operationName ?? null,
  };
}

/** The Service's GraphQL request timeout (doc/api/graphql/index.md, Limits: 30 seconds). */
export const REQUEST_TIMEOUT_MS = 30_000;
const TIMED_OUT = 'Request timed out. Please try a less complex query or a smaller set of records.';

/**
 * Answers 503 with the Service's message when a query runs past the timeout. Its resolvers are
 * not stopped (JavaScript cannot cancel them); each of their queries is bounded on its own.
 */
export function withTimeout<T>(work: Promise<T>, ms = REQUEST_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Refusal(503, TIMED_OUT)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
