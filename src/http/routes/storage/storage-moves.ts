/**
 * Repository storage moves (reference §4; spec, Bulk repository storage moves), the same routes
 * for each kind of container:
 *
 *   GET  /{kind}_repository_storage_moves[/:repository_storage_move_id]   every move, newest first
 *   POST /{kind}_repository_storage_moves                                  bulk: 202, scheduled by a job
 *   GET  /{kinds}/:id/repository_storage_moves[/:repository_storage_move_id]
 *   POST /{kinds}/:id/repository_storage_moves                             single: 201, state scheduled
 *
 * Administrators only, checked before the parameters (the Service's class-level
 * `before { authenticated_as_admin! }`).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { StorageMoveRow } from '../../../db/tables/storage-moves.ts';
import {
  findContainer, findMove, listMoves, type Container, type ContainerKind,
} from '../../../domain/storage-moves/storage-moves.queries.ts';
import { scheduleMove } from '../../../domain/storage-moves/schedule-move.ts';
import { SCHEDULE_BULK_JOB, type BulkPayload } from '../../../domain/storage-moves/schedule-bulk-moves.ts';
import { checkShard, isSamePlace } from '../../../domain/storage-moves/shards.ts';
import { findSnippetById } from '../../../domain/snippets/snippets.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { presentMoves } from '../../loaders/storage-move-containers.ts';
import {
  GroupRepositoryStorageMoveSchema, ProjectRepositoryStorageMoveSchema, SnippetRepositoryStorageMoveSchema,
} from '../../entities/storage-move.ts';
import { audit, auditUser } from '../../audit.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

interface KindRoutes {
  kind: ContainerKind;
  /** Path segment of the container resource. */
  plural: 'projects' | 'snippets' | 'groups';
  schema: TSchema;
  /** `:id` of the container: projects and groups also take a URL-encoded full path. */
  idParam: ReturnType<typeof P.string> | ReturnType<typeof P.integer>;
  /** The container's id by `:id`, answering the resource's 404 (reference §4, lookup misses). */
  resolve: (request: FastifyRequest, id: string | number) => Promise<number>;
}

const KINDS: KindRoutes[] = [
  {
    kind: 'project', plural: 'projects', schema: ProjectRepositoryStorageMoveSchema,
    idParam: P.string({ description: 'project id or URL-encoded full path' }),
    resolve: async (request, id) => (await loadProject(request, String(id))).project.id,
  },
  {
    kind: 'snippet', plural: 'snippets', schema: SnippetRepositoryStorageMoveSchema,
    idParam: P.integer({ description: 'snippet id' }),
    resolve: async (request, id) => {
      const snippet = await findSnippetById(request.server.kiln.db, Number(id));
      if (!snippet) throw notFound('Snippet');
      return snippet.id;
    },
  },
  {
    kind: 'group', plural: 'groups', schema: GroupRepositoryStorageMoveSchema,
    idParam: P.string({ description: 'group id or URL-encoded full path' }),
    resolve: async (request, id) => (await loadGroup(request, String(id))).group.id,
  },
];

const ACCEPTED = Type.Object({ message: Type.String() });

/**
 * A scheduled move, recorded on the project or group it moves (a snippet's on the administrator,
 * as snippets are no audit entity).
 */
async function auditMove(
  request: FastifyRequest, caller: Caller, kind: ContainerKind, container: Container, move: { destination_storage_name?: string | null },
) {
  const db = request.server.kiln.db;
  const message = `Scheduled a repository storage move of ${kind} ${container.id} from `
    + `${container.repository_storage}${move.destination_storage_name ? ` to ${move.destination_storage_name}` : ''}`;
  if (kind === 'snippet') return auditUser(request, caller.user, message);
  const namespaceId = kind === 'group' ? container.id : (await findProjectById(db, container.id))?.namespace_id;
  const ns = namespaceId === undefined ? undefined : (await namespacePathsById(db, [namespaceId])).get(namespaceId);
  const project = kind === 'project' ? await findProjectById(db, container.id) : undefined;
  const entityPath = ns ? (project ? `${ns.fullPath}/${project.path}` : ns.fullPath) : String(container.id);
  return audit(request, { entityType: kind === 'project' ? 'Project' : 'Group', entityId: container.id, entityPath, message });
}

const storageMoves: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const storageNames = config.storages.map((s) => s.name) as unknown as readonly [string];
  const deps = { db, jobs: app.jobs, shards: config.storages };
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };
  const moveId = P.integer({ description: 'storage move id' });

  for (const k of KINDS) {
    const tags = ['repository storage moves'];
    const one = async (move: StorageMoveRow | undefined) => {
      if (!move) throw recordNotFound();
      return (await presentMoves(db, k.kind, [move], config.externalUrl))[0];
    };

    route(app, {
      method: 'GET', url: `/${k.kind}_repository_storage_moves`, auth: 'required', params: defineParams({ ...paginationParams }),
      schema: {
        summary: `Every ${k.kind} repository storage move, newest first (administrators)`, tags,
        response: { 200: Type.Array(k.schema) },
      },
      preValidation: adminOnly,
    }, async ({ request, reply }) => {
      const rows = await paginate(db, request, reply, listMoves(db, k.kind) as any) as StorageMoveRow[];
      return presentMoves(db, k.kind, rows, config.externalUrl);
    });

    route(app, {
      method: 'GET', url: `/${k.kind}_repository_storage_moves/:repository_storage_move_id`, auth: 'required',
      params: defineParams({ repository_storage_move_id: moveId }),
      schema: { summary: `A ${k.kind} repository storage move (administrators)`, tags, response: { 200: k.schema } },
      preValidation: adminOnly,
    }, async ({ input }) => one(await findMove(db, k.kind, input.repository_storage_move_id)));

    route(app, {
      method: 'POST', url: `/${k.kind}_repository_storage_moves`, auth: 'required',
      params: defineParams({
        source_storage_name: P.oneOf(storageNames, { description: 'the shard whose repositories move' }),
        destination_storage_name: P.optional(P.oneOf(storageNames, { description: 'default: a weighted pick per repository' })),
      }),
      schema: { summary: `Schedule moves of every ${k.kind} repository on a shard (administrators)`, tags, response: { 202: ACCEPTED } },
      preValidation: adminOnly,
    }, async ({ request, reply, input, caller }) => {
      // The spec: "all storages must be reachable"; and never a move onto the same directory.
      const source = await checkShard(config.storages, input.source_storage_name);
      if (!source.ok) throw validationFailed({ source_storage_name: ['is not reachable'] });
      if (input.destination_storage_name !== undefined) {
        const destination = await checkShard(config.storages, input.destination_storage_name);
        if (!destination.ok) throw validationFailed({ destination_storage_name: ['is not reachable'] });
        if (isSamePlace(source, destination)) {
          throw validationFailed({
            destination_storage_name: ['must be a different storage than source_storage_name (both are the same directory)'],
          });
        }
      }
      const payload: BulkPayload = { kind: k.kind, source: input.source_storage_name, destination: input.destination_storage_name ?? null };
      await app.jobs.enqueue(SCHEDULE_BULK_JOB, payload);
      const admin = caller.user;
      await auditUser(
        request, admin,
        `Scheduled repository storage moves of every ${k.kind} on `
        + `${payload.source}${payload.destination ? ` to ${payload.destination}` : ''}`,
      );
      reply.code(202);
      return { message: '202 Accepted' };
    });

    route(app, {
      method: 'GET', url: `/${k.plural}/:id/repository_storage_moves`, auth: 'required', params: defineParams({
        id: k.idParam, ...paginationParams,
      }),
      schema: { summary: `The repository storage moves of a ${k.kind} (administrators)`, tags, response: { 200: Type.Array(k.schema) } },
      preValidation: adminOnly,
    }, async ({ request, reply, input }) => {
      const containerId = await k.resolve(request, input.id);
      const rows = await paginate(db, request, reply, listMoves(db, k.kind, containerId) as any) as StorageMoveRow[];
      return presentMoves(db, k.kind, rows, config.externalUrl);
    });

    route(app, {
      method: 'GET', url: `/${k.plural}/:id/repository_storage_moves/:repository_storage_move_id`, auth: 'required', params: defineParams({
        id: k.idParam, repository_storage_move_id: moveId,
      }),
      schema: { summary: `A repository storage move of a ${k.kind} (administrators)`, tags, response: { 200: k.schema } },
      preValidation: adminOnly,
    }, async ({ request, input }) => {
      const containerId = await k.resolve(request, input.id);
      return one(await findMove(db, k.kind, input.repository_storage_move_id, containerId));
    });

    route(app, {
      method: 'POST', url: `/${k.plural}/:id/repository_storage_moves`, auth: 'required',
      params: defineParams({
        id: k.idParam, destination_storage_name: P.optional(P.string({ description: 'default: a weighted pick among the other shards' })),
      }),
      schema: { summary: `Schedule a repository storage move of a ${k.kind} (administrators)`, tags, response: { 201: k.schema } },
      preValidation: adminOnly,
    }, async ({ request, reply, input, caller }) => {
      const containerId = await k.resolve(request, input.id);
      const container: Container | undefined = await findContainer(db, k.kind, containerId);
      if (!container) throw k.kind === 'project' ? notFound('Project') : k.kind === 'snippet' ? notFound('Snippet') : notFound('Group');
      const result = await scheduleMove(deps, k.kind, container, input.destination_storage_name);
      if (!result.ok) throw validationFailed(result.errors);
      await auditMove(request, caller, k.kind, container, result.move as { destination_storage_name?: string | null });
      reply.code(201);
      return one(result.move);
    });
  }
};

export default storageMoves;
