/**
 * The GraphQL engine: graphql-js executed by mercurius, with the Service's limits checked before a
 * query runs and its wording for errors. Made on the first GraphQL request (plugin.ts loads this
 * module then), so an instance nobody queries over GraphQL neither loads graphql-js, mercurius
 * and the schema nor builds the schema at boot (issue 17, item 5). mercurius lives on a Fastify
 * instance of its own that never listens; kiln's routes call its `graphql` function.
 */
import Fastify, { type FastifyError, type FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import { getOperationAST, getVariableValues, GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { KilnContext } from '../http/context.ts';
import { typeDefs, resolvers } from './schema/index.ts';
import { createLoaders, type GqlContext } from './context.ts';
import { complexityError, depthError, MAX_COMPLEXITY, MAX_DEPTH, measure, type LimitsResult } from './limits.ts';
import { Refusal, withTimeout, type GraphqlParams } from './request.ts';

class InvalidVariables extends Error {
  readonly errors: readonly GraphQLError[];
  constructor(errors: readonly GraphQLError[]) {
    super('invalid variables');
    this.errors = errors;
  }
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

const MAX_VALIDATION_ERRORS = 5;

function complexityLimit(ctx: GqlContext): number {
  if (!ctx.viewer) return MAX_COMPLEXITY.anonymous;
  return ctx.viewer.admin === 1 ? MAX_COMPLEXITY.admin : MAX_COMPLEXITY.authenticated;
}

export interface GraphqlEngine {
  /** One query's answer body: `{data}`, `{data, errors}` or `{errors}` (GraphQL failures are 200). */
  execute(request: FastifyRequest, params: GraphqlParams): Promise<object>;
}

export async function createEngine(kiln: KilnContext): Promise<GraphqlEngine> {
  const instance = Fastify({ logger: false });
  await instance.register(mercurius, {
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
      return {
        statusCode: 200,
        response: {
          data: execution.data ?? null,
          errors: (execution.errors ?? []).map((e) => formatError(ctx.request, e as GraphQLError)),
        },
      };
    },
  });

  const measured = new WeakMap<object, Map<string, LimitsResult>>();
  // Depth and complexity depend on the caller (the limits are per kind of user), so they are
  // checked per request on the cached document, before anything runs.
  instance.graphql.addHook('preExecution', async (schema, document, context, variables) => {
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
    if (m.complexity > ctx.complexity.limit && !m.introspection) {
      throw new Refusal(200, complexityError(m.complexity, ctx.complexity.limit).message);
    }
  });

  const execute = async (request: FastifyRequest, params: GraphqlParams): Promise<object> => {
    if (params.query.trim() === '') return { errors: [{ message: 'No query string was present' }] };
    const viewer = request.caller?.user ?? null;
    const ctx: GqlContext & { operationName: string | null } = {
      kiln, request, caller: request.caller, viewer,
      complexity: { limit: MAX_COMPLEXITY.anonymous, score: 0 },
      loaders: createLoaders(kiln, viewer),
      operationName: params.operationName,
    };
    ctx.complexity.limit = complexityLimit(ctx);
    try {
      const result = await withTimeout(
        instance.graphql(params.query, ctx as never, params.variables ?? undefined, params.operationName ?? undefined),
      );
      // One key order whichever executor answered (compiled or not): data, then errors.
      return result.errors ? { data: result.data ?? null, errors: result.errors } : { data: result.data };
    } catch (err) {
      if (err instanceof Refusal && err.statusCode === 200) return { errors: [{ message: err.message }] };
      if (err instanceof InvalidVariables) return { errors: err.errors.map((x) => formatError(request, x)) };
      const e = err as FastifyError & { errors?: GraphQLError[] };
      if (e.code === 'MER_ERR_GQL_VALIDATION' && Array.isArray(e.errors)) {
        // The Service reports at most five validation errors (GitlabSchema validate_max_errors 5).
        return {
          errors: e.errors.slice(0, MAX_VALIDATION_ERRORS).map((x) => formatError(request, x)).map((x) => ({
            ...x, message: rubyMessage(x.message),
          })),
        };
      }
      throw err;
    }
  };

  await instance.ready();
  return { execute };
}
