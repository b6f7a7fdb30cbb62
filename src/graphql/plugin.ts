/**
 * The GraphQL API (issue 18; CONTRACT: `POST`/`GET /api/graphql`, explorer at
 * `/-/graphql-explorer`): graphql-js executed by mercurius, behind the REST authentication
 * (the same credentials: PAT with `api`/`read_api`, OAuth, a session cookie whose writes carry
 * the CSRF token) and answering in the GraphQL shape with the Service's messages
 * (GraphqlController): 401 "Invalid token", 403 "API not accessible for user", 422 "Query too
 * large" and "Mutations are forbidden in GET requests".
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.ts';
import { MAX_QUERY_SIZE, readParams, Refusal, sendErrors } from './request.ts';
import type { GraphqlEngine } from './engine.ts';
import explorer from './explorer.ts';

/** Queries in one batched request: the 10,000-character limit bounds them, this bounds the array. */
const MAX_BATCH = 100;

async function graphqlPlugin(app: FastifyInstance): Promise<void> {
  // graphql-js, mercurius and the schema are loaded on the first query (engine.ts); a failure
  // to build them is not remembered, so the next query tries again.
  let engine: Promise<GraphqlEngine> | null = null;
  const loadEngine = (): Promise<GraphqlEngine> => (engine ??= import('./engine.ts')
    .then((m) => m.createEngine(app.kiln))
    .catch((err: unknown) => {
      engine = null;
      throw err;
    }));

  await app.register(async (scope) => {
    // Authentication failures in the GraphQL shape (GraphqlController#authorize_access_api!): a
    // token that is unknown, expired or lacks the api/read_api scope is an invalid token.
    scope.setErrorHandler(async (error: FastifyError | ApiError | Refusal, request, reply) => {
      if (error instanceof Refusal) return sendErrors(reply, error.statusCode, [error.message]);
      if (error instanceof ApiError) {
        const body = error.body as { error?: string; message?: unknown };
        if (error.statusCode === 401 || body.error === 'insufficient_scope' || body.error === 'invalid_token') {
          return sendErrors(reply, 401, ['Invalid token']);
        }
        if (error.statusCode === 403) return sendErrors(reply, 403, ['API not accessible for user']);
        if (error.statusCode === 404) return sendErrors(reply, 404, [typeof body.message === 'string' ? body.message : 'Not found!']);
        if (error.statusCode === 429) return sendErrors(reply, 429, ['Retry later']);
        return sendErrors(reply, error.statusCode, [typeof body.message === 'string' ? body.message : 'Bad request']);
      }
      const status = (error as FastifyError).statusCode;
      if (status === 413) return sendErrors(reply, 413, ['Request entity too large']);
      if (status !== undefined && status >= 400 && status < 500) return sendErrors(reply, 400, [error.message]);
      request.log.error({ err: error }, 'graphql request failed');
      return sendErrors(reply, 500, ['Internal server error']);
    });

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const engine = await loadEngine();
      const body = request.body;
      let answer: object;
      if (request.method === 'POST' && Array.isArray(body)) {
        // Apollo-style batching (the Service's multiplex): an array of queries answered in order,
        // the size limit applying to their texts together (GraphqlController#limit_query_size).
        if (body.length > MAX_BATCH) throw new Refusal(422, `Too many queries in one request (maximum is ${MAX_BATCH})`);
        const items = body.map((item) => readParams(item as Record<string, unknown>, true));
        if (items.reduce((n, i) => n + i.query.length, 0) > MAX_QUERY_SIZE) throw new Refusal(422, 'Query too large');
        // In order, one after the other: a later query may read what an earlier mutation wrote.
        const answers: object[] = [];
        for (const i of items) answers.push(await engine.execute(request, i));
        answer = answers;
      } else {
        answer = await engine.execute(
          request,
          readParams((request.method === 'GET' ? request.query : body) as Record<string, unknown> | null),
        );
      }
      return reply.code(200).type('application/json').send(JSON.stringify(answer));
    };

    // Queries with a read_api token are allowed on POST too; resolvers of mutations ask for `api`.
    // Arguments are bounded by the resolvers (bounds.ts, global-id.ts), which answer NUL and text
    // no column holds as GraphQL errors: the null-byte refusal is left to them (ownErrors).
    const config = { auth: 'optional' as const, scopes: ['read_api'], ownErrors: true };
    scope.get('/api/graphql', { config, schema: { hide: true } }, handler);
    scope.post('/api/graphql', { config, schema: { hide: true } }, handler);
  });

  await app.register(explorer);
}

export default fp(graphqlPlugin, { name: 'graphql' });
