/**
 * How an API route is declared: one object with its method, path, guard (auth mode, scopes, job
 * token) and declared parameters, and a handler that receives `input` typed from exactly those
 * parameters and a `caller` that is non-null when the route requires authentication.
 *
 * A handler cannot read a parameter set other than the one its route declares (no
 * `request.input as …`), and cannot forget that an optional-auth route may be anonymous (no
 * `request.caller!`): both are the types of its context, checked by the compiler.
 */
import type {
  FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods, preValidationHookHandler,
} from 'fastify';
import type { AuthMode, Caller } from './context.ts';
import type { ParamsDefinition, ParamsOf } from './input/params.ts';

/** The caller a handler sees: present whenever the route requires authentication (a 401 came first otherwise). */
export type CallerFor<A extends AuthMode> = A extends 'required' ? Caller : Caller | null;

/** The handler's input: the declared parameters after validation and coercion (input/params.ts). */
export type InputOf<D> = D extends ParamsDefinition ? ParamsOf<D> : Record<string, never>;

export interface RouteContext<I, C> {
  request: FastifyRequest;
  reply: FastifyReply;
  input: I;
  caller: C;
}

export interface RouteSpec<A extends AuthMode, D extends ParamsDefinition | undefined> {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  /** `required`: 401 without credentials; `optional`: anonymous allowed; `non_get`: required except GET/HEAD. */
  auth: A;
  /** Scopes accepted besides `api` (and `read_api` on reads), e.g. `read_user`. */
  scopes?: string[];
  /** Whether a CI job token authenticates this route. */
  jobToken?: boolean;
  /** Declared parameters, validated into the handler's `input`. */
  params?: D;
  /** Routes that stream multipart bodies themselves say `stream`. */
  multipart?: 'buffer' | 'stream';
  /** OpenAPI summary, tags, response schemas (which also serialise the answer). */
  schema?: FastifySchema;
  /** Guards that run before the parameters are validated (a 403 comes before a 400, reference §6.4). */
  preValidation?: preValidationHookHandler | preValidationHookHandler[];
}

export type RouteHandler<A extends AuthMode, D extends ParamsDefinition | undefined> =
  (context: RouteContext<InputOf<D>, CallerFor<A>>) => unknown;

export function route<const A extends AuthMode, D extends ParamsDefinition | undefined = undefined>(
  app: FastifyInstance,
  spec: RouteSpec<A, D>,
  handler: RouteHandler<A, D>,
): void {
  const { method, url, auth, scopes, jobToken, params, multipart, schema, preValidation } = spec;
  // Only the keys a route sets: the plugins read `config.x === undefined` as "not set".
  const config: Record<string, unknown> = { auth };
  if (scopes !== undefined) config.scopes = scopes;
  if (jobToken !== undefined) config.jobToken = jobToken;
  if (params !== undefined) config.params = params;
  if (multipart !== undefined) config.multipart = multipart;
  app.route({
    method,
    url,
    config,
    ...(schema !== undefined ? { schema } : {}),
    ...(preValidation !== undefined ? { preValidation } : {}),
    // declared-params.ts validated `request.input` against `params` and authentication.ts set
    // `request.caller` (never null past its 401 when `auth` is `required`): the one place the
    // untyped request decorations are read as the route's declared types.
    handler: (request, reply) => {
      const { input, caller } = request;
      return handler({ request, reply, input: input as InputOf<D>, caller: caller as CallerFor<A> });
    },
  });
}
