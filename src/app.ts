/**
 * buildApp: the whole HTTP application for a configuration and its opened dependencies, with
 * plugins in an explicit order. It never listens (server.ts does), so tests inject requests into
 * it or listen on port 0 themselves.
 */
import crypto from 'node:crypto';
import Fastify, {
  LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions,
} from 'fastify';
import type { Config } from './config/schema.ts';
import type { Database } from './db/database.ts';
import type { JobTokenResolver, KilnContext } from './http/context.ts';
import { AuthCache } from './http/auth/cache.ts';
import { registerSettingsCache, SettingsCache } from './domain/settings/settings-cache.ts';
import type { Cluster } from './cluster/cluster.ts';
import readYourWrites from './http/plugins/read-your-writes.ts';
import { parseQueryString } from './http/input/query-string.ts';
import runningHandlers from './http/plugins/running-handlers.ts';
import requestDefaults from './http/plugins/request-defaults.ts';
import cors from './http/plugins/cors.ts';
import earlyAnswer from './http/plugins/early-answer.ts';
import nullBytes from './http/plugins/null-bytes.ts';
import bodyParsers from './http/plugins/body-parsers.ts';
import errorHandling from './http/plugins/error-handling.ts';
import authentication from './http/plugins/authentication.ts';
import rateLimit from './http/plugins/rate-limit.ts';
import declaredParams from './http/plugins/declared-params.ts';
import metrics from './http/plugins/metrics.ts';
import openapi from './http/plugins/openapi.ts';
import { registerRoutes } from './http/routes/index.ts';
import backgroundJobs from './workers/plugin.ts';
import { redactUrl } from './http/redact.ts';
import { serializerCompiler } from './http/entities/serializers.ts';
import { lazyChildLogger } from './http/lazy-logger.ts';
import oauth from './oauth/index.ts';
import web from './web/index.ts';
import smartHttp, { GIT_PATH, unroutableGitAnswer } from './git/smart-http.ts';
import scim from './scim/index.ts';
import { unroutableScimAnswer } from './scim/errors.ts';
import { badRequest, internalError, routeNotFound } from './http/errors.ts';
import graphql from './graphql/plugin.ts';

// Request ids: a random per-process prefix and a counter, unique without a CSPRNG call per request.
const REQUEST_ID_PREFIX = crypto.randomBytes(6).toString('hex');
let requestCounter = 0;
function nextRequestId(): string {
  requestCounter += 1;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}

export interface AppDeps {
  database: Database;
  secretKeyBase: string;
  version: { version: string; revision: string };
  /** With KILN_REDIS_URL: the Redis state this process shares with the instance's others. */
  cluster?: Cluster | null;
  jobTokens?: JobTokenResolver | null;
  /** false: no logs. Otherwise pino at LOG_LEVEL, to stdout or to `logStream` (tests read it). */
  logger?: boolean;
  logStream?: NodeJS.WritableStream;
}

/**
 * Paths the router cannot read, answered before any route or scope sees them: a percent escape
 * that is not UTF-8 (400, as the Service's HandleMalformedStrings answers) and a segment past
 * maxParamLength, longer than any id, name or path kiln stores, which names nothing (404). Each is
 * answered in the shape of the interface the path belongs to (issue 35, item 13): SCIM's error
 * body, git's text, the API's JSON everywhere else.
 */
function answerUnroutable(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = error.code === 'FST_ERR_BAD_URL' ? 400 : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 404 : null;
  const path = request.url.split('?', 1)[0]!;
  if (status !== null && path.startsWith('/api/scim/')) return send(unroutableScimAnswer(status));
  if (status !== null && GIT_PATH.test(path)) return send(unroutableGitAnswer(status));
  const err = status === 400 ? badRequest() : status === 404 ? routeNotFound() : internalError();
  if (err.statusCode >= 500) request.log.error({ err: error }, 'routing failed');
  return send({ status: err.statusCode, type: 'application/json', body: JSON.stringify(err.body) });

  function send(answer: { status: number; type: string; body: string }): void {
    // A Buffer, so that the type is sent as given (no charset appended to SCIM's media type).
    reply.code(answer.status).type(answer.type).send(Buffer.from(answer.body));
  }
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger === false ? false : {
      level: config.logLevel,
      // Requests are logged by our own onResponse line below, with secrets removed from the URL.
      serializers: { req: (req) => ({ method: req.method, url: redactUrl(req.url) }) },
      redact: ['req.headers.authorization', 'req.headers["private-token"]', 'req.headers["job-token"]', 'req.headers.cookie'],
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) => lazyChildLogger(logger, bindings, options),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : nextRequestId();
    },
    routerOptions: {
      querystringParser: parseQueryString,
      maxParamLength: 1000,
      // The Service's router squeezes repeated slashes out of a path before matching it (Grape's
      // and Rails' normalize_path), and clients rely on it: python-gitlab 3.12 sets a feature
      // flag at `/api/v4/features//<name>`.
      ignoreDuplicateSlashes: true,
    },
    frameworkErrors: answerUnroutable,
    bodyLimit: 12 * 1024 * 1024,
    // Node refuses request heads over 16 KiB with 431 before kiln sees them; leave room for the
    // configured query string so that a long one meets the Service's 414 (request-defaults.ts).
    http: { maxHeaderSize: 16 * 1024 + config.maxQueryStringBytes },
    trustProxy: false,
  });

  const context: KilnContext = {
    config,
    db: deps.database.db,
    dialect: deps.database.dialect,
    authCache: deps.cluster?.authCache ?? new AuthCache(),
    secretKeyBase: deps.secretKeyBase,
    version: deps.version,
    jobTokens: deps.jobTokens ?? null,
  };
  app.decorate('kiln', context);
  // Instance settings are read through this process's cache of the app's handle (rate limits
  // read them on every request); other processes say when they change them (cluster/).
  registerSettingsCache(context.db, deps.cluster?.settingsCache ?? new SettingsCache());
  // Every route as registered, kept by reference so that what a later onRoute hook stamps on it
  // (the declaring file, routes/area.ts) is read too: `npm run routes` and the route table tests.
  const routeTable: RouteOptions[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    routeTable.push(route);
  });

  // kiln validates declared parameters itself (Grape's texts); response schemas still serialise.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(serializerCompiler);

  // First: its onRoute hook counts the handlers of every route registered after it.
  await app.register(runningHandlers);
  // Before anything reads a cache, and (onSend) after everything that writes.
  await app.register(readYourWrites, { consistency: deps.cluster?.consistency ?? null });
  await app.register(requestDefaults);
  // CORS preflights are answered before authentication and rate limits, as Rack::Cors sits before Warden.
  await app.register(cors);
  await app.register(earlyAnswer);
  await app.register(errorHandling);
  await app.register(openapi);
  await app.register(metrics);
  await app.register(bodyParsers);
  await app.register(authentication);
  await app.register(rateLimit, { cluster: deps.cluster ?? null });
  await app.register(declaredParams);
  await app.register(nullBytes);

  // One line per request at info, with secrets masked; below info the hook is not installed.
  if (['info', 'debug', 'trace'].includes(config.logLevel)) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({
        method: request.method, url: redactUrl(request.url), status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10, user: request.caller?.initialUser.id,
      }, 'request');
      done();
    });
  }

  await app.register(backgroundJobs);
  await registerRoutes(app);
  await app.register(oauth);
  await app.register(web);
  await app.register(smartHttp);
  await app.register(scim, { prefix: '/api/scim/v2' });
  // GraphQL API at /api/graphql and its explorer (issue 18).
  await app.register(graphql);
  return app;
}
