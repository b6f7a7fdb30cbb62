/**
 * Finding the issue a route names by `:issue_iid` in a project the viewer can read, as the viewer
 * may see it: a missing issue and one the viewer may not read (issues feature off or private to
 * members, a confidential issue of someone else) answer the same `404 Issue Not Found`, so
 * confidential titles do not leak. Also the project paths a page of issues is presented with.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { assigneeIdsOf, findIssueByIid } from '../../domain/issues/issues.queries.ts';
import { canReadIssue, type IssueSubject } from '../../domain/issues/issue.policy.ts';
import { isStorableId } from '../../db/constraints.ts';
import { notFound } from '../errors.ts';
import type { IssueProjectPath } from '../entities/issue.ts';
import type { ProjectContext } from './containers.ts';

export interface IssueContext {
  issue: IssueRow;
  /** What IssuePolicy asks of it: author, confidentiality, lock and assignees. */
  subject: IssueSubject;
}

export async function loadIssue(request: FastifyRequest, ctx: ProjectContext, iid: number): Promise<IssueContext> {
  const db = request.server.kiln.db;
  const issue = isStorableId(iid) ? await findIssueByIid(db, ctx.project.id, iid) : undefined;
  if (!issue) throw notFound('Issue');
  const subject = await issueSubject(db, issue);
  if (!canReadIssue(ctx.actor, ctx.project, subject)) throw notFound('Issue');
  return { issue, subject };
}

export async function issueSubject(db: Kysely<DB>, issue: IssueRow): Promise<IssueSubject> {
  const assignees = await assigneeIdsOf(db, [issue.id]);
  return {
    author_id: issue.author_id, confidential: issue.confidential, discussion_locked: issue.discussion_locked,
    assignee_ids: assignees.get(issue.id) ?? [],
  };
}

/** The path of the one project a project's routes present issues from. */
export function contextProjectPath(ctx: ProjectContext): Map<number, IssueProjectPath> {
  return new Map([[ctx.project.id, { fullPath: `${ctx.namespace.fullPath}/${ctx.project.path}`, path: ctx.project.path, namespaceId: ctx.project.namespace_id }]]);
}

export { issueProjectPaths } from '../entities/issue.ts';
