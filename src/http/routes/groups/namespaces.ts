/**
 * The namespaces resource (the Service's API::Namespaces): a signed-in user's own namespaces
 * (their personal namespace and the groups they are a direct member of; every namespace for
 * administrators), one namespace by id or URL-encoded full path, and whether a path is free
 * (`exists`, with the path the Service would suggest instead).
 *
 * Reading one namespace follows `read_namespace`: an administrator, the owner of a personal
 * namespace, or a member of the group or of a group above it. Anyone else gets the same 404 as
 * for a namespace that does not exist, so private groups stay invisible.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { NamespaceRow, UserRow } from '../../../db/types.ts';
import {
  findNamespaceByIdOrPath, membersCountWithDescendants, namespacePaths, namespacesQuery, pathTaken, suggestNamespacePath,
} from '../../../domain/namespaces/namespaces.queries.ts';
import { authorizedGroupLevels, groupAccessLevel } from '../../../domain/members/members.queries.ts';
import { ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { NamespaceSchema, presentNamespace, type Namespace } from '../../entities/namespace.ts';
import { rejectNulBytes } from '../../input/string-guards.ts';
import { route } from '../../route.ts';

const listParams = defineParams({
  search: P.optional(P.string({ description: 'part of the name or path' })),
  owned_only: P.optional(P.boolean({ default: false })),
  top_level_only: P.optional(P.boolean({ default: false })),
  ...paginationParams,
});
const showParams = defineParams({ id: P.string({ description: 'namespace id or URL-encoded full path' }) });
const existsParams = defineParams({
  id: P.string({ ownErrors: true, description: 'the path to check' }),
  parent_id: P.optional(P.integer({ description: 'look among the children of this group; top level when absent' })),
});

/** Longest path or search string that can match anything (Namespace#path is at most 255). */
const MAX_PATH = 255;
const MAX_ID = 2_147_483_647;

const namespaces: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  /** The caller's membership level in a group, inherited from the groups above it. */
  async function levelIn(user: UserRow, lineage: number[]): Promise<number> {
    return user.admin ? ACCESS_LEVELS.owner : groupAccessLevel(db, user.id, lineage);
  }


  /**
   * The page's entities; members_count_with_descendants for the groups the caller administers,
   * counted for the whole page at once (membership levels in one pass, one walk down the trees,
   * one membership query).
   */
  async function present(user: UserRow, rows: NamespaceRow[]): Promise<Namespace[]> {
    const paths = await namespacePaths(db, rows);
    const levels = user.admin ? null : await authorizedGroupLevels(db, user.id);
    const administered = rows.filter(
      (ns) => ns.kind === 'group' && (levels === null || (levels.get(ns.id) ?? 0) >= ACCESS_LEVELS.owner),
    ).map((ns) => ns.id);
    const counts = await membersCountWithDescendants(db, administered);
    return rows.map((ns) => {
      const p = paths.get(ns.id)!;
      return presentNamespace({ namespace: ns, fullPath: p.fullPath, fullName: p.fullName }, externalUrl, counts.get(ns.id) ?? null);
    });
  }


  route(app, {
    method: 'GET', url: '/namespaces', auth: 'required', params: listParams,
    schema: {
      summary: "The caller's namespaces (all for administrators)", tags: ['namespaces'],
      response: { 200: Type.Array(NamespaceSchema) },
    },
  }, async ({ request, reply, input, caller }) => {
    rejectNulBytes(input, ['search']);
    const user = caller.user;
    if (input.search && input.search.length > MAX_PATH) return [];
    const qb = namespacesQuery(db, {
      userId: user.admin ? null : user.id, ownedOnly: input.owned_only, topLevelOnly: input.top_level_only,
      search: input.search || undefined,
    });
    return present(user, await paginate(db, request, reply, qb));
  });

  route(app, {
    method: 'GET', url: '/namespaces/:id', auth: 'required', params: showParams,
    schema: { summary: 'A namespace by id or full path', tags: ['namespaces'], response: { 200: NamespaceSchema } },
  }, async ({ input, caller }) => {
    const user = caller.user;
    const ns = await findNamespaceByIdOrPath(db, input.id);
    if (!ns) throw notFound('Namespace');
    const lineage = (await namespacePaths(db, [ns])).get(ns.id)!.lineage;
    const readable = user.admin === 1
      || (ns.kind === 'user' ? ns.owner_id === user.id : (await levelIn(user, lineage)) >= ACCESS_LEVELS.guest);
    if (!readable) throw notFound('Namespace');
    return (await present(user, [ns]))[0];
  });

  route(app, {
    method: 'GET', url: '/namespaces/:id/exists', auth: 'required', params: existsParams,
    schema: {
    summary: 'Whether a namespace path is taken, with a free path suggested',
    tags: ['namespaces'],
    response: { 200: Type.Object({ exists: Type.Boolean(), suggests: Type.Array(Type.String()) }) },
    },
  }, async ({ input }) => {
    rejectNulBytes(input, ['id']);
    const parentId = input.parent_id ?? null;
    // Paths longer than a path may be, and parents beyond any id, hold nothing.
    const exists = input.id.length <= MAX_PATH && (parentId === null || (parentId > 0 && parentId <= MAX_ID))
      && await pathTaken(db, parentId, input.id);
    return { exists, suggests: exists ? [await suggestNamespacePath(db, input.id)] : [] };
  });
};

export default namespaces;
