/**
 * Finding the merge request a route names by `:merge_request_iid` in a project the viewer can
 * read: a missing request and one the viewer may not read (the feature off, or a private
 * project's code closed to them) answer the same `404 Merge Request Not Found`.
 */
import type { FastifyRequest } from 'fastify';
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
  if (!canReadMergeRequest(ctx.actor, ctx.project)) throw notFound('Merge Request');
  const mr = isStorableId(iid) ? await findMergeRequestByIid(db, ctx.project.id, iid) : undefined;
  if (!mr) throw notFound('Merge Request');
  const assignees = await peopleOf(db, 'merge_request_assignees', [mr.id]);
  return {
    mr, repo: projectRepository(config.storages, ctx.project),
    subject: { author_id: mr.author_id, assignee_ids: assignees.get(mr.id) ?? [], discussion_locked: mr.discussion_locked },
  };
}
