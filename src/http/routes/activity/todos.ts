/**
 * Todos (lib/api/todos.rb of the Service 15.2; doc/api/todos.md): the caller's todos, newest
 * first and filtered as TodosFinder filters them, marking one or all of them done, and adding one
 * for an issue. As the Service does (Todos::AllowedTargetFilterService after paginating), a page
 * leaves out todos whose target the caller may no longer read, so a page can be short. Only
 * issues can be todo targets until merge requests land (issue 30): a todo of another target type
 * has nothing to present and is left out the same way.
 */
import { protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { IssueRow } from '../../../db/tables/issues.ts';
import { canReadIssue } from '../../../domain/issues/issue.policy.ts';
import { assigneeIdsOf } from '../../../domain/issues/issues.queries.ts';
import { findIssuesByIds } from '../../../domain/issues/issue-actions.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { TODO_ACTIONS, type TodoActionName } from '../../../domain/todos/todos.queries.ts';
import {
  findTodoOfUser, markAllTodosDone, markTodo, markTodoDone, noteTextsByIds, todoActionName, todosOfUser, type TodoRow,
} from '../../../domain/todos/todos-list.queries.ts';
import { recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadProject } from '../../loaders/containers.ts';
import { issueProjectPaths, loadIssue } from '../../loaders/issues.ts';
import { loadMergeRequest } from '../../loaders/merge-requests.ts';
import { presentMergeRequests } from '../../entities/merge-request.ts';
import { findMergeRequestsByIds } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { canMergeMergeRequest, canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { presentIssuesFor } from '../../loaders/issue-presenting.ts';
import { presentNamespaceBasic, presentProjectIdentity } from '../../entities/project.ts';
import { presentUserBasic } from '../../entities/user.ts';
import { TodoListSchema, TodoSchema, type Todo } from '../../entities/todo.ts';
import { route } from '../../route.ts';

const ACTION_NAMES = Object.keys(TODO_ACTIONS) as TodoActionName[];
// TodosFinder::TODO_TYPES.
const TARGET_TYPES = ['Issue', 'MergeRequest', 'Commit', 'Epic', 'DesignManagement::Design', 'AlertManagement::Alert'] as const;

const listParams = defineParams({
  action: P.optional(P.oneOf(ACTION_NAMES)),
  author_id: P.optional(P.integer()),
  project_id: P.optional(P.integer()),
  group_id: P.optional(P.integer()),
  state: P.optional(P.oneOf(['pending', 'done'] as const)),
  type: P.optional(P.oneOf(TARGET_TYPES)),
  ...paginationParams,
});
const idParams = defineParams({ id: P.integer() });
const mergeRequestParams = defineParams({
  id: P.string({ description: 'ID or URL-encoded full path of the project' }), merge_request_iid: P.integer(),
});
const issueParams = defineParams({ id: P.string({ description: 'ID or URL-encoded full path of the project' }), issue_iid: P.integer() });

const todos: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  /** The todos whose target the caller may read, as the Todo entity, in the order given. */
  async function present(request: FastifyRequest, rows: readonly TodoRow[]): Promise<Todo[]> {
    const issueIds = rows.flatMap((r) => (r.target_type === 'Issue' && r.target_id !== null ? [r.target_id] : []));
    const issueRows = await findIssuesByIds(db, issueIds);
    const assignees = await assigneeIdsOf(db, issueRows.map((i) => i.id));
    const projectIds = new Set([...issueRows.map((i) => i.project_id), ...rows.flatMap((r) => r.project_id ?? [])]);
    const projects = await findProjectsByIds(db, [...projectIds]);
    const namespaces = await namespacePathsById(db, [...new Set([
      ...projects.map((p) => p.namespace_id), ...rows.flatMap((r) => r.group_id ?? []),
    ])]);
    const projectById = new Map(projects.map((p) => [p.id, p]));
    const readable: IssueRow[] = [];
    for (const issue of issueRows) {
      const project = projectById.get(issue.project_id);
      if (!project) continue;
      const actor = await projectActor(db, request.caller?.user ?? null, project.id, namespaces.get(project.namespace_id)?.lineage ?? []);
      const subject = { ...issue, assignee_ids: assignees.get(issue.id) ?? [] };
      if (canReadIssue(actor, project, subject)) readable.push(issue);
    }
    const presented = new Map<string, Todo['target']>((await presentIssuesFor(request, readable, null)).map((i) => [`Issue:${i.id}`, i]));
    const titles = new Map<string, string>(readable.map((i) => [`Issue:${i.id}`, i.title]));
    // Merge requests: readable with the project's merge requests (read_merge_request), presented as the MergeRequest entity.
    const mrIds = rows.flatMap((r) => (r.target_type === 'MergeRequest' && r.target_id !== null ? [r.target_id] : []));
    for (const mr of await findMergeRequestsByIds(db, mrIds)) {
      const project = projectById.get(mr.project_id) ?? (await findProjectsByIds(db, [mr.project_id]))[0];
      const ns = project
        ? namespaces.get(project.namespace_id) ?? (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)
        : undefined;
      if (!project || !ns) continue;
      const actor = await projectActor(db, request.caller?.user ?? null, project.id, ns.lineage);
      if (!canReadMergeRequest(actor, project)) continue;
      const [entity] = await presentMergeRequests(db, [mr], {
        externalUrl: config.externalUrl, projects: await issueProjectPaths(db, [mr.project_id]), viewerId: request.caller?.user.id ?? null,
        from: null, full: { canMerge: canMergeMergeRequest(actor, project, await protectionRulesFor(db, project.id), mr.target_branch) },
      });
      presented.set(`MergeRequest:${mr.id}`, entity);
      titles.set(`MergeRequest:${mr.id}`, mr.title);
    }
    const [authors, notes] = await Promise.all([
      findUsersByIds(db, [...new Set(rows.map((r) => r.author_id))]),
      noteTextsByIds(db, rows.flatMap((r) => r.note_id ?? [])),
    ]);
    const authorById = new Map(authors.map((u) => [u.id, u]));
    const out: Todo[] = [];
    for (const r of rows) {
      const key = `${r.target_type}:${r.target_id}`;
      const target = r.target_id !== null ? presented.get(key) : undefined;
      const title = titles.get(key);
      const author = authorById.get(r.author_id);
      if (!target || title === undefined || !author) continue;
      const project = r.project_id !== null ? projectById.get(r.project_id) : undefined;
      const ns = project ? namespaces.get(project.namespace_id) : undefined;
      const group = r.group_id !== null ? namespaces.get(r.group_id) : undefined;
      out.push({
        id: r.id,
        ...(project && ns ? { project: presentProjectIdentity(project, ns) } : {}),
        ...(group ? { group: presentNamespaceBasic(group, config.externalUrl) } : {}),
        author: presentUserBasic(author, {}, { externalUrl: config.externalUrl, canReadProfile: false }),
        action_name: todoActionName(r.action) ?? String(r.action),
        target_type: r.target_type,
        target,
        target_url: `${target.web_url}${r.note_id !== null ? `#note_${r.note_id}` : ''}`,
        body: (r.note_id !== null ? notes.get(r.note_id) : undefined) ?? title,
        state: r.state,
        created_at: r.created_at,
        updated_at: r.updated_at,
      });
    }
    return out;
  }

  route(app, {
    method: 'GET', url: '/todos', auth: 'required', params: listParams,
    schema: { summary: "The caller's todos", tags: ['todos'], response: { 200: TodoListSchema } },
  }, async ({ request, reply, input, caller }) => {
    const rows = await paginate(db, request, reply, await todosOfUser(db, caller.user.id, input));
    return present(request, rows);
  });

  route(app, {
    method: 'POST', url: '/todos/:id/mark_as_done', auth: 'required', params: idParams,
    schema: { summary: 'Mark a todo done', tags: ['todos'], response: { 201: TodoSchema } },
  }, async ({ request, reply, input, caller }) => {
    const todo = await findTodoOfUser(db, caller.user.id, input.id);
    if (!todo) throw recordNotFound();
    // A todo whose target is gone or no longer readable has no entity to answer with: as missing.
    if ((await present(request, [todo])).length === 0) throw recordNotFound();
    const done = await markTodoDone(db, todo);
    reply.code(201);
    return (await present(request, [done]))[0];
  });

  route(app, {
    method: 'POST', url: '/todos/mark_as_done', auth: 'required',
    schema: { summary: "Mark all the caller's todos done", tags: ['todos'], response: { 204: Type.Null() } },
  }, async ({ reply, caller }) => {
    await markAllTodosDone(db, caller.user.id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/todo', auth: 'required', params: issueParams,
    schema: { summary: 'Add a todo for an issue', tags: ['todos'], response: { 201: TodoSchema, 304: Type.Null() } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    const todo = await markTodo(db, caller.user.id, {
      project_id: issue.project_id, group_id: null, target_type: 'Issue', target_id: issue.id,
    });
    if (!todo) return reply.code(304).send();
    reply.code(201);
    return (await present(request, [todo]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests/:merge_request_iid/todo', auth: 'required', params: mergeRequestParams,
    schema: { summary: 'Add a todo for a merge request', tags: ['todos'], response: { 201: TodoSchema, 304: Type.Null() } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const { mr } = await loadMergeRequest(request, ctx, input.merge_request_iid);
    const todo = await markTodo(db, caller.user.id, {
      project_id: mr.project_id, group_id: null, target_type: 'MergeRequest', target_id: mr.id,
    });
    if (!todo) return reply.code(304).send();
    reply.code(201);
    return (await present(request, [todo]))[0];
  });
};

export default todos;
