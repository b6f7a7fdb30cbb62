/**
 * What every route reaches through `request.server.kiln`, and the per-request additions
 * (`request.caller`, `request.input`) with the route options that drive them.
 */
import type { RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.ts';
import type { DB } from '../db/types.ts';
import type { Dialect } from '../db/database.ts';
import type { AuthCache } from './auth/cache.ts';
import type { ParamsDefinition } from './input/params.ts';

import type { Caller } from './auth/caller.ts';
export type { Caller, Credential, CredentialKind } from './auth/caller.ts';

/** Resolves a job token to its running job and user (registered by the CI area). */
export type JobTokenResolver = (db: Kysely<DB>, token: string) => Promise<{ jobId: number; userId: number } | null>;

export interface KilnContext {
  config: Config;
  db: Kysely<DB>;
  dialect: Dialect;
  authCache: AuthCache;
  secretKeyBase: string;
  version: { version: string; revision: string };
  jobTokens: JobTokenResolver | null;
}

/** `required`: 401 without credentials; `optional`: anonymous allowed; `non_get`: required except GET/HEAD. */
export type AuthMode = 'required' | 'optional' | 'non_get';

declare module 'fastify' {
  interface FastifyInstance {
    kiln: KilnContext;
    /** Every route registered, in order (app.ts). */
    routeTable: RouteOptions[];
  }
  interface FastifyRequest {
    caller: Caller | null;
    input: Record<string, unknown>;
  }
  interface FastifyContextConfig {
    /** Default `required`. */
    auth?: AuthMode;
    /** Scopes accepted besides `api` (and `read_api` on reads), e.g. `read_user`. */
    scopes?: string[];
    /** Whether a CI job token authenticates this route. */
    jobToken?: boolean;
    /** Declared parameters, validated into `request.input`. */
    params?: ParamsDefinition<any>;
    /** Routes that stream multipart bodies themselves say `stream`. */
    multipart?: 'buffer' | 'stream';
    /** Pages and other routes outside the API (no API auth hook, no JSON defaults). */
    web?: boolean;
    /** The route answers NUL in its parameters in its own error shape (SCIM): null-bytes.ts lets it. */
    ownErrors?: boolean;
  }
}
