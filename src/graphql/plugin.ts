/**
 * The GraphQL API (issue 18; CONTRACT: `POST`/`GET /api/graphql`, explorer at
 * `/-/graphql-explorer`): graphql-js executed by mercurius, behind the REST authentication
 * (the same credentials: PAT with `api`/`read_api`, OAuth, a session cookie whose writes carry
 * the CSRF token) and answering in the GraphQL shape with the Service's messages
 * (GraphqlController): 401 "Invalid token", 403 "API not accessible for user", 422 "Query too
 * large" and "Mutations are forbidden in GET requests".
 */
import fp from 'fastify-plugin';
import mercurius from 'mercurius';
import { getOperationAST, getVariableValues, GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.ts';
import { typeDefs, resolvers } from './schema/index.ts';
import { createLoaders, type GqlContext } from './context.ts';
import { complexityError, depthError, MAX_COMPLEXITY, MAX_DEPTH, MAX_QUERY_SIZE, measure, type LimitsResult } from './limits.ts';
import explorer from './explorer.ts';

/** A refusal decided before execution, answered as `{"errors":[{"message"}]}` with its status. */
export class Refusal extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

class InvalidVariables extends Error {
  readonly errors: readonly GraphQLError[];
  constructor(errors: readonly GraphQLError[]) {
    super('invalid variables');
    this.errors = errors;
  }
}

function sendErrors(reply: FastifyReply, status: number, messages: string[]): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify({ errors: messages.map((message) => ({ message })) }));
}

function formatError(request: FastifyRequest, e: GraphQLError): GraphQLFormattedError {
  const original = e.originalError;
  // Anything but a GraphQL error from a resolver is kiln's fault: logged, not shown.
  if (original && !(original instanceof GraphQLError) && !(original as { errors?: unknown }).errors) {
    request.log.error({ err: original }, 'graphql resolver failed');
    return { message: 'Internal server error', ...(e.path ? { path: e.path } : {}) };
  }
  return {
    message: e.message,
    ...(e.locations ? { locations: e.locations } : {}),
    ...(e.path ? { path: e.path } : {}),
  };
}

/**
 * graphql-js words the commonest validation failures differently from graphql-ruby, which the
 * Service runs; clients that match on the text see the Service's wording for these.
 */
const RUBY_MESSAGES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^Cannot query field "([^"]+)" on type "([^"]+)"\./, (m) => `Field '${m[1]}' doesn't exist on type '${m[2]}'`],
  [/^Unknown argument "([^"]+)" on field "(?:[^".]+\.)?([^"]+)"\./, (m) => `Field '${m[2]}' doesn't accept argument '${m[1]}'`],
  [/^Field "(?:[^".]+\.)?([^"]+)" argument "([^"]+)" of type "[^"]+" is required, but it was not provided\./, (m) => `Field '${m[1]}' is missing required arguments: ${m[2]}`],
];

function rubyMessage(message: string): string {
  for (const [re, word] of RUBY_MESSAGES) {
    const m = re.exec(message);
    if (m) return word(m);
  }
  return message;
}

interface GraphqlParams { query: string; variables: Record<string, unknown> | null; operationName: string | null }

/** `{query, variables, operationName}` from the JSON body or the query string; variables may be JSON text. */
function readParams(raw: Record<string, unknown> | null | undefined, sizeChecked = false): GraphqlParams {
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
  return { query: query ?? '', variables: (variables as Record<string, unknown> | null | undefined) ?? null, operationName: operationName ?? null };
}

const MAX_VALIDATION_ERRORS = 5;

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

/** Queries in one batched request: the 10,000-character limit bounds them, this bounds the array. */
const MAX_BATCH = 100;

function complexityLimit(ctx: GqlContext): number {
  if (!ctx.viewer) return MAX_COMPLEXITY.anonymous;
  return ctx.viewer.admin === 1 ? MAX_COMPLEXITY.admin : MAX_COMPLEXITY.authenticated;
}

async function graphqlPlugin(app: FastifyInstance): Promise<void> {
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    routes: false,
    graphiql: false,
    // Documents are parsed and validated once per distinct text (mercurius's LRU).
    cache: 1024,
    // graphql-jit compiles a document to a function from its second run on (mercurius's `jit`).
    jit: 1,
    errorFormatter: (execution: ExecutionResult, context: unknown) => {
      const ctx = context as GqlContext;
      return { statusCode: 200, response: { data: execution.data ?? null, errors: (execution.errors ?? []).map((e) => formatError(ctx.request, e as GraphQLError)) } };
    },
  });

  const measured = new WeakMap<object, Map<string, LimitsResult>>();
  // Depth and complexity depend on the caller (the limits are per kind of user), so they are
  // checked per request on the cached document, before anything runs.
  app.graphql.addHook('preExecution', async (schema, document, context, variables) => {
    const ctx = context as unknown as GqlContext & { operationName: string | null };
    const operation = getOperationAST(document, ctx.operationName);
    if (ctx.request.method === 'GET' && operation?.operation === 'mutation') {
      throw new Refusal(422, 'Mutations are forbidden in GET requests');
    }
    // Variables are coerced here for every run: the run on which mercurius compiles a document
    // would otherwise leave them to graphql-jit, whose messages differ from graphql-js's.
    if (operation?.variableDefinitions?.length) {
      const coerced = getVariableValues(schema, operation.variableDefinitions, (variables ?? {}) as Record<string, unknown>);
      if (coerced.errors) throw new InvalidVariables(coerced.errors);
    }
    const vars = variables as Record<string, unknown> | undefined;
    // Without variables a document always measures the same: remembered per cached document.
    const noVars = !vars || Object.keys(vars).length === 0;
    const key = `${ctx.operationName ?? ''}`;
    let m = noVars ? measured.get(document)?.get(key) : undefined;
    if (!m) {
      m = measure(schema, document, ctx.operationName, vars) ?? undefined;
      if (m && noVars) {
        const perOp = measured.get(document) ?? new Map<string, LimitsResult>();
        perOp.set(key, m);
        measured.set(document, perOp);
      }
    }
    if (!m) return;
    if (m.depth > MAX_DEPTH) throw new Refusal(200, depthError(m.depth).message);
    ctx.complexity = { limit: complexityLimit(ctx), score: m.complexity };
    // An introspection query reads only the schema kept in memory: the Service lets GraphiQL's
    // (complexity 217-ish) through for anonymous callers too (GitlabSchema INTROSPECTION_MAX_COMPLEXITY).
    if (m.complexity > ctx.complexity.limit && !m.introspection) throw new Refusal(200, complexityError(m.complexity, ctx.complexity.limit).message);
  });

  await app.register(async (scope) => {
    // Authentication failures in the GraphQL shape (GraphqlController#authorize_access_api!): a
    // token that is unknown, expired or lacks the api/read_api scope is an invalid token.
    scope.setErrorHandler(async (error: FastifyError | ApiError | Refusal, request, reply) => {
      if (error instanceof Refusal) return sendErrors(reply, error.statusCode, [error.message]);
      if (error instanceof ApiError) {
        const body = error.body as { error?: string; message?: unknown };
        if (error.statusCode === 401 || body.error === 'insufficient_scope' || body.error === 'invalid_token') return sendErrors(reply, 401, ['Invalid token']);
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

    /** One query's answer body: `{data}`, `{data, errors}` or `{errors}` (GraphQL failures are 200). */
    const execute = async (request: FastifyRequest, params: GraphqlParams): Promise<object> => {
      if (params.query.trim() === '') return { errors: [{ message: 'No query string was present' }] };
      const viewer = request.caller?.user ?? null;
      const ctx: GqlContext & { operationName: string | null } = {
        kiln: app.kiln, request, caller: request.caller, viewer,
        complexity: { limit: MAX_COMPLEXITY.anonymous, score: 0 },
        loaders: createLoaders(app.kiln, viewer),
        operationName: params.operationName,
      };
      ctx.complexity.limit = complexityLimit(ctx);
      try {
        const result = await withTimeout(app.graphql(params.query, ctx as never, params.variables ?? undefined, params.operationName ?? undefined));
        // One key order whichever executor answered (compiled or not): data, then errors.
        return result.errors ? { data: result.data ?? null, errors: result.errors } : { data: result.data };
      } catch (err) {
        if (err instanceof Refusal && err.statusCode === 200) return { errors: [{ message: err.message }] };
        if (err instanceof InvalidVariables) return { errors: err.errors.map((x) => formatError(request, x)) };
        const e = err as FastifyError & { errors?: GraphQLError[] };
        if (e.code === 'MER_ERR_GQL_VALIDATION' && Array.isArray(e.errors)) {
          // The Service reports at most five validation errors (GitlabSchema validate_max_errors 5).
          return { errors: e.errors.slice(0, MAX_VALIDATION_ERRORS).map((x) => formatError(request, x)).map((x) => ({ ...x, message: rubyMessage(x.message) })) };
        }
        throw err;
      }
    };

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
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
        for (const i of items) answers.push(await execute(request, i));
        answer = answers;
      } else {
        answer = await execute(request, readParams((request.method === 'GET' ? request.query : body) as Record<string, unknown> | null));
      }
      return reply.code(200).type('application/json').send(JSON.stringify(answer));
    };

    // Queries with a read_api token are allowed on POST too; resolvers of mutations ask for `api`.
    const config = { auth: 'optional' as const, scopes: ['read_api'] };
    scope.get('/api/graphql', { config, schema: { hide: true } }, handler);
    scope.post('/api/graphql', { config, schema: { hide: true } }, handler);
  });

  await app.register(explorer);
}

export default fp(graphqlPlugin, { name: 'graphql' });
