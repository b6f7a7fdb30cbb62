/**
 * Issue links (lib/api/issue_links.rb of the Service 15.2; doc/api/issue_links.md): the issues
 * linked to one, in link order and only those the caller may read; linking two issues (the caller
 * needs admin_issue_link — Guest and up — on both); reading and removing one link by its id from
 * either end. Failures answer in the Service's words (IssuableLinks::CreateService, DestroyService).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { IssueRow } from '../../../db/tables/issues.ts';
import { canReadIssue } from '../../../domain/issues/issue.policy.ts';
import { canAdminIssueLink } from '../../../domain/issues/issue-link.policy.ts';
import {
  createIssueLink, destroyIssueLink, findLinkOfIssue, LINK_TYPES, relatedIssues, type IssueLinkRow, type LinkType,
} from '../../../domain/issues/issue-links.queries.ts';
import { findIssueById } from '../../../domain/issues/issues.queries.ts';
import { issueReference } from '../../../domain/issues/issue-reference.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { ApiError, notFound, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { issueSubject, loadIssue } from '../../loaders/issues.ts';
import { presentIssuesFor, projectRefs } from '../../loaders/issue-presenting.ts';
import { IssueLinkSchema, RelatedIssueSchema, toIssueBasic } from '../../entities/issue-link.ts';
import { route } from '../../route.ts';

const issueParams = defineParams({ id: P.string({ maxLength: 1024 }), issue_iid: P.integer() });
const linkParams = defineParams({ id: P.string({ maxLength: 1024 }), issue_iid: P.integer(), issue_link_id: P.integer() });
const createParams = defineParams({
  id: P.string({ maxLength: 1024 }),
  issue_iid: P.integer(),
  target_project_id: P.string({ maxLength: 1024, description: 'ID or URL-encoded path of the target project' }),
  target_issue_iid: P.integer(),
  link_type: P.optional(P.oneOf(LINK_TYPES, { description: 'default relates_to' })),
});

const apiError = (status: number, message: string) => new ApiError(status, { message });

/**
 * What the system notes on the source and the target say of a new link: SystemNoteService
 * relate_issuable for `relates_to`, and block_issuable / blocked_by_issuable for a blocking link
 * (written from the blocking issue's side and the blocked one's).
 */
const RELATION_WORDS: Record<LinkType, [string, string]> = {
  relates_to: ['related to', 'related to'],
  blocks: ['blocking', 'blocked by'],
  is_blocked_by: ['blocked by', 'blocking'],
};

const issueLinks: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  /** Whether the caller may read an issue of any project (the link's far end). */
  async function readable(request: FastifyRequest, issue: IssueRow): Promise<boolean> {
    const [project] = await findProjectsByIds(db, [issue.project_id]);
    if (!project) return false;
    const lineage = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)?.lineage ?? [];
    const actor = await projectActor(db, request.caller?.user ?? null, project.id, lineage);
    return canReadIssue(actor, project, await issueSubject(db, issue));
  }

  async function presentLink(request: FastifyRequest, ctx: ProjectContext, link: IssueLinkRow) {
    const [source, target] = await Promise.all([findIssueById(db, link.source_id), findIssueById(db, link.target_id)]);
    const [s, t] = await presentIssuesFor(request, [source!, target!], { project: ctx.project.id });
    return { source_issue: toIssueBasic(s), target_issue: toIssueBasic(t), link_type: link.link_type };
  }

  /** The link named by id with `issue` at either end, whose other end the caller may read (else 404s as the Service). */
  async function loadLink(request: FastifyRequest, ctx: ProjectContext, issue: IssueRow, linkId: number) {
    const link = await findLinkOfIssue(db, issue.id, linkId);
    if (!link) throw recordNotFound();
    const other = await findIssueById(db, link.source_id === issue.id ? link.target_id : link.source_id);
    if (!other || !(await readable(request, other))) throw notFound('Issue');
    return { link, other };
  }

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/links', auth: 'required', params: issueParams,
    schema: { summary: 'Issues linked to an issue', tags: ['issue_links'], response: { 200: Type.Array(RelatedIssueSchema) } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    const related = await relatedIssues(db, issue.id);
    const visible: typeof related = [];
    for (const r of related) if (await readable(request, r.issue)) visible.push(r);
    const presented = await presentIssuesFor(request, visible.map((r) => r.issue), { project: ctx.project.id });
    return presented.map((p, i) => ({
      ...p, issue_link_id: visible[i].linkId, link_type: visible[i].linkType,
      link_created_at: visible[i].linkCreatedAt, link_updated_at: visible[i].linkUpdatedAt,
    }));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/issues/:issue_iid/links', auth: 'required', params: createParams,
    schema: { summary: 'Link two issues', tags: ['issue_links'], response: { 201: IssueLinkSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const source = await loadIssue(request, ctx, input.issue_iid);
    const targetCtx = await loadProject(request, input.target_project_id);
    const target = await loadIssue(request, targetCtx, input.target_issue_iid);
    // IssueLinks::CreateService: already linked either way (409) before permissions (403).
    if ((await relatedIssues(db, source.issue.id)).some((r) => r.issue.id === target.issue.id)) {
      throw apiError(409, 'Issue(s) already assigned');
    }
    if (!canAdminIssueLink(ctx.actor, ctx.project, source.subject)
      || !canAdminIssueLink(targetCtx.actor, targetCtx.project, target.subject)) {
      throw apiError(403, "Couldn't link issues. You must have at least the Guest role in both projects.");
    }
    const refs = await projectRefs(request, [ctx.project.id, targetCtx.project.id]);
    const sourceRef = refs.get(ctx.project.id)!;
    const targetRef = refs.get(targetCtx.project.id)!;
    if (source.issue.id === target.issue.id) {
      // The link model's own validation, reported as the service reports a link it could not save.
      throw apiError(422, `${issueReference(target.issue.iid, targetRef, sourceRef)} cannot be added: cannot be related to itself`);
    }
    const linkType = input.link_type ?? 'relates_to';
    const [sourceSays, targetSays] = RELATION_WORDS[linkType];
    const result = await createIssueLink(db, {
      source: source.issue, target: target.issue, linkType, userId: caller.user.id,
      sourceNote: `marked this issue as ${sourceSays} ${issueReference(target.issue.iid, targetRef, sourceRef)}`,
      targetNote: `marked this issue as ${targetSays} ${issueReference(source.issue.iid, sourceRef, targetRef)}`,
    });
    if (!result.ok) throw apiError(409, 'Issue(s) already assigned');
    reply.code(201);
    return presentLink(request, ctx, result.value);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/links/:issue_link_id', auth: 'required', params: linkParams,
    schema: { summary: 'An issue link', tags: ['issue_links'], response: { 200: IssueLinkSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    const { link } = await loadLink(request, ctx, issue, input.issue_link_id);
    return presentLink(request, ctx, link);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/issues/:issue_iid/links/:issue_link_id', auth: 'required', params: linkParams,
    schema: { summary: 'Remove an issue link', tags: ['issue_links'], response: { 200: IssueLinkSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const { issue } = await loadIssue(request, ctx, input.issue_iid);
    const { link } = await loadLink(request, ctx, issue, input.issue_link_id);
    const [source, target] = await Promise.all([findIssueById(db, link.source_id), findIssueById(db, link.target_id)]);
    const [sourceProject, targetProject] = await Promise.all([
      loadProject(request, String(source!.project_id)), loadProject(request, String(target!.project_id)),
    ]);
    // IssuableLinks::DestroyService: admin_issue_link on both ends, else the link is "not found".
    if (!canAdminIssueLink(sourceProject.actor, sourceProject.project, await issueSubject(db, source!))
      || !canAdminIssueLink(targetProject.actor, targetProject.project, await issueSubject(db, target!))) {
      throw apiError(404, 'No Issue Link found');
    }
    const presented = await presentLink(request, ctx, link);
    const refs = await projectRefs(request, [source!.project_id, target!.project_id]);
    const sRef = refs.get(source!.project_id)!;
    const tRef = refs.get(target!.project_id)!;
    await destroyIssueLink(db, link, {
      userId: caller.user.id, source: source!, target: target!,
      sourceNote: `removed the relation with ${issueReference(target!.iid, tRef, sRef)}`,
      targetNote: `removed the relation with ${issueReference(source!.iid, sRef, tRef)}`,
    });
    return presented;
  });
};

export default issueLinks;
