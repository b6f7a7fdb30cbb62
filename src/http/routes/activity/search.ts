/**
 * The search API (lib/api/search.rb, doc/api/search.md): the instance, a group (with its
 * sub-groups) and a project, each with `scope` and `search` required. Signed-in users only (the
 * Service authenticates every search), counted against the search rate limit before anything else
 * (its `before` block: a 429 comes before a 400). The scopes, their levels and entities are the
 * table in http/search/scopes.ts; at the instance and group levels the scopes that need
 * Elasticsearch are refused with the Service's 400.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkSearchRateLimit } from '../../search-rate-limit.ts';
import { ApiError, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginationParams } from '../../lists/pagination.ts';
import { loadGroup, loadProject, type GroupContext, type ProjectContext } from '../../loaders/containers.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { MAX_REF_NAME } from '../../../domain/repositories/ref-names.ts';
import { GitTimedOut } from '../../../domain/repositories/git-bytes.ts';
import {
  ELASTICSEARCH_SCOPES, SEARCH_SCOPES, scopeAt, scopeValues, type SearchLevel, type SearchScope, type SearchSort,
} from '../../search/scopes.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

/** Gitlab::Search::Params: at most 4096 characters and 64 terms (of two characters or more). */
const SEARCH_CHAR_LIMIT = 4096;
const SEARCH_TERM_LIMIT = 64;
const MIN_TERM_LENGTH = 2;

const STATES = ['all', 'opened', 'closed', 'merged'] as const;

function commonParams(level: SearchLevel) {
  return {
    search: P.string({ maxLength: SEARCH_CHAR_LIMIT, description: 'the text searched for' }),
    scope: P.oneOf(scopeValues(level), { description: 'what is searched' }),
    state: P.optional(P.oneOf(STATES, { description: 'issues and merge requests in this state' })),
    confidential: P.optional(P.boolean({ description: 'confidential issues only, or non-confidential only' })),
    // Not declared by the Service (read from the raw params by SearchService): an unknown value
    // leaves the scope's own order.
    order_by: P.optional(P.name({ description: 'created_at or updated_at (issues, merge requests)' })),
    sort: P.optional(P.name({ description: 'asc or desc' })),
    ...paginationParams,
  };
}

const PARAMS = {
  global: defineParams(commonParams('global')),
  group: defineParams({ id: P.string(), ...commonParams('group') }),
  project: defineParams({
    id: P.string(),
    ...commonParams('project'),
    ref: P.optional(P.string({ maxLength: MAX_REF_NAME, description: 'branch, tag or commit (blobs, commits); default branch' })),
  }),
};

/** Gitlab::Search::SortOptions: created_at or updated_at with asc or desc; anything else is no order. */
function sortOf(orderBy: string | undefined, sort: string | undefined): SearchSort | null {
  if ((orderBy === 'created_at' || orderBy === 'updated_at') && (sort === 'asc' || sort === 'desc')) {
    return { column: orderBy, direction: sort };
  }
  return null;
}

function checkTerms(search: string): void {
  const terms = search.split(/\s+/).filter((t) => t.length >= MIN_TERM_LENGTH);
  if (terms.length > SEARCH_TERM_LIMIT) throw validationFailed({ search: [`has too many terms (maximum is ${SEARCH_TERM_LIMIT})`] });
}

const serializers = new Map<SearchScope, (doc: unknown) => string>();
function serializerOf(scope: SearchScope) {
  let s = serializers.get(scope);
  if (!s) {
    s = compileSerializer(Type.Array(scope.item));
    serializers.set(scope, s);
  }
  return s;
}

/** What every scope's page may hold, for the OpenAPI document (each answer is serialised by its scope's entity). */
const RESULTS = Type.Array(Type.Union([...new Set(Object.values(SEARCH_SCOPES).map((s) => s.item))]));

const search: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const rateLimited = async (request: FastifyRequest) => checkSearchRateLimit(request);

  interface Input {
    search: string; scope: string; ref?: string; state?: string; confidential?: boolean; order_by?: string; sort?: string;
  }

  async function answer(
    level: SearchLevel, request: FastifyRequest, reply: FastifyReply, caller: Caller, input: Input,
    where: { group?: GroupContext; project?: ProjectContext },
  ) {
    const scope = scopeAt(level, input.scope);
    if (!scope) {
      if ((ELASTICSEARCH_SCOPES as readonly string[]).includes(input.scope)) {
        throw new ApiError(400, { message: { error: 'Scope not supported without Elasticsearch!' } });
      }
      throw new ApiError(400, { error: 'scope does not have a valid value' });
    }
    checkTerms(input.search);
    let results: unknown[];
    try {
      results = await scope.run({
        request, reply, db, externalUrl: config.externalUrl, sshPort: config.sshPort, viewer: caller.user, level,
        search: input.search, state: input.state === 'all' ? undefined : input.state, confidential: input.confidential,
        sort: sortOf(input.order_by, input.sort), group: where.group ?? null, project: where.project ?? null, ref: input.ref,
      });
    } catch (err) {
      // A commit search walking a long history past its time bound: the answer later versions of
      // the Service give a search that runs too long (API::Search, `Request timed out`, 408).
      if (err instanceof GitTimedOut) throw new ApiError(408, { message: { error: 'Request timed out' } });
      throw err;
    }
    serializeWith(reply, serializerOf(scope));
    return results;
  }

  route(app, {
    method: 'GET', url: '/search', auth: 'required', params: PARAMS.global, preValidation: rateLimited,
    schema: { summary: 'Search the instance', tags: ['search'], response: { 200: RESULTS } },
  }, async ({ request, reply, input, caller }) => answer('global', request, reply, caller, input, {}));

  for (const url of ['/groups/:id/search', '/groups/:id/-/search']) {
    route(app, {
      method: 'GET', url, auth: 'required', params: PARAMS.group, preValidation: rateLimited,
      schema: { summary: 'Search a group and its sub-groups', tags: ['search'], response: { 200: RESULTS } },
    }, async ({ request, reply, input, caller }) => {
      const group = await loadGroup(request, input.id);
      return answer('group', request, reply, caller, input, { group });
    });
  }

  for (const url of ['/projects/:id/search', '/projects/:id/-/search']) {
    route(app, {
      method: 'GET', url, auth: 'required', params: PARAMS.project, preValidation: rateLimited,
      schema: { summary: 'Search a project', tags: ['search'], response: { 200: RESULTS } },
    }, async ({ request, reply, input, caller }) => {
      const project = await loadProject(request, input.id);
      return answer('project', request, reply, caller, input, { project });
    });
  }
};

export default search;
