/**
 * Moving and cloning an issue to another project (lib/api/issues.rb of the Service 15.2,
 * Issues::MoveService and Issues::CloneService): the caller needs admin_issue (Reporter and up) in
 * both projects, and an issue already moved can be neither moved nor cloned again (Issue#can_move?);
 * moving within its own project is refused. Refusals answer 400 with the services' messages.
 */
import type { FastifyPluginAsync } from 'fastify';
import { copyIssue } from '../../../domain/issues/move-issue.ts';
import { issueReference } from '../../../domain/issues/issue-reference.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { ApiError, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { loadIssue } from '../../loaders/issues.ts';
import { presentIssuesFor, projectRefs } from '../../loaders/issue-presenting.ts';
import { IssueSchema } from '../../entities/issue.ts';
import { route } from '../../route.ts';

const id = P.string({ description: 'ID or URL-encoded full path of the project' });
const moveParams = defineParams({ id, issue_iid: P.integer(), to_project_id: P.integer({ description: 'the target project' }) });
const cloneParams = defineParams({
  id, issue_iid: P.integer(), to_project_id: P.integer({ description: 'the target project' }),
  with_notes: P.optional(P.boolean({ description: 'copy the comments too (default false)' })),
});

const issueMove: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  for (const mode of ['move', 'clone'] as const) {
    const Verb = mode === 'move' ? 'Move' : 'Clone';
    route(app, {
      method: 'POST', url: `/projects/:id/issues/:issue_iid/${mode}`, auth: 'required', params: mode === 'move' ? moveParams : cloneParams,
      schema: { summary: `${Verb} an issue to another project`, tags: ['issues'], response: { 201: IssueSchema } },
    }, async ({ request, reply, input, caller }) => {
      const ctx = await loadProject(request, input.id);
      const { issue } = await loadIssue(request, ctx, input.issue_iid);
      // `Project.find_by(id:)`: a project that does not exist is 404; one the caller may not use is a refusal below.
      const [target] = isStorableId(input.to_project_id) ? await findProjectsByIds(db, [input.to_project_id]) : [];
      if (!target) throw notFound('Project');
      const lineage = (await namespacePathsById(db, [target.namespace_id])).get(target.namespace_id)?.lineage ?? [];
      const targetActor = await projectActor(db, caller.user, target.id, lineage);
      const refuse = (message: string) => new ApiError(400, { message });
      if (issue.moved_to_id !== null || !canOnProject(ctx.actor, 'admin_issue', ctx.project)
        || !canOnProject(targetActor, 'admin_issue', target)) {
        throw refuse(`Cannot ${mode} issue due to insufficient permissions!`);
      }
      if (mode === 'move' && target.id === ctx.project.id) throw refuse('Cannot move issue to project it originates from!');
      if (mode === 'clone' && target.pending_delete) throw refuse('Cannot clone issue to target project as it is pending deletion.');
      const refs = await projectRefs(request, [ctx.project.id, target.id]);
      const sourceRef = refs.get(ctx.project.id)!;
      const targetRef = refs.get(target.id)!;
      const created = await copyIssue(db, {
        mode, source: issue, userId: caller.user.id, target: { projectId: target.id, lineage },
        withNotes: 'with_notes' in input && input.with_notes === true,
        sourceRefFromTarget: issueReference(issue.iid, sourceRef, targetRef),
        targetPrefixFromSource: issueReference(0, targetRef, sourceRef).replace(/#0$/, ''),
      });
      reply.code(201);
      // The Service presents a moved issue from the source project, a clone from the target.
      const from = { project: mode === 'move' ? ctx.project.id : target.id };
      return (await presentIssuesFor(request, [created], from))[0];
    });
  }
};

export default issueMove;
