/**
 * Finding the merge request a route names by `:merge_request_iid` in a project the viewer can
 * read: a missing request and one the viewer may not read (the feature off, or a private
 * project's code closed to them) answer the same `404 Merge Request Not Found`.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { isStorableId } from '../../db/constraints.ts';
import { findMergeRequestByIid, peopleOf } from '../../domain/merge-requests/merge-requests.queries.ts';
import { canReadMergeRequest, type MergeRequestSubject } from '../../domain/merge-requests/merge-request.policy.ts';
import { projectRepository, type ProjectRepository } from '../../domain/repositories/project-repository.ts';
import { notFound } from '../errors.ts';
import type { ProjectContext } from './containers.ts';

export interface MergeRequestContext {
  mr: MergeRequestRow;
  subject: MergeRequestSubject;
  repo: ProjectRepository;
}

export async function loadMergeRequest(request: FastifyRequest, ctx: ProjectContext, iid: number): Promise<MergeRequestContext> {
  const { db, config } = request.server.kiln;
  const found = await findReadableMergeRequest(db, config.storages, ctx, iid);
  if (!found) throw notFound('Merge Request');
  return found;
}

/**
 * The request of `iid` when the viewer of `ctx` may read it, else null: the one check behind the
 * API's `:merge_request_iid` and the web interface's `/-/merge_requests/<iid>`.
 */
export async function findReadableMergeRequest(
  db: Kysely<DB>, storages: StorageShard[], ctx: ProjectContext, iid: number,
): Promise<MergeRequestContext | null> {
  if (!canReadMergeRequest(ctx.actor, ctx.project)) return null;
  const mr = isStorableId(iid) ? await findMergeRequestByIid(db, ctx.project.id, iid) : undefined;
  if (!mr) return null;
  const assignees = await peopleOf(db, 'merge_request_assignees', [mr.id]);
  return {
    mr, repo: projectRepository(storages, ctx.project),
    subject: { author_id: mr.author_id, assignee_ids: assignees.get(mr.id) ?? [], discussion_locked: mr.discussion_locked },
  };
}
