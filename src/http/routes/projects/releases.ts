/**
 * A project's releases (lib/api/releases.rb and Releases::Create/Update/DestroyService of the
 * Service 15.2): list, one by tag, the latest by permalink, create (tagging `ref` through kiln's
 * tag writer when the tag does not exist yet), update and delete (the tag stays). Reading needs
 * read_release (403), one release also download_code; writing takes Developer (create_release,
 * update_release, destroy_release). A job token may create a release, as the Service's release
 * tool does from a job. The refusals are the services' own words: `Release already exists` (409,
 * also when two creations race: the unique index decides), `Milestone(s) not found: …` (400),
 * `Ref is not specified` (422), the tag writer's, `Tag does not exist` and `params is empty`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ReleaseRow } from '../../../db/tables/releases.ts';
import type { MilestoneRow } from '../../../db/tables/labels.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { listRefs, resolveCommit, type RefEntry } from '../../../domain/repositories/git-read.ts';
import { apiRefChangeRefusal } from '../../../domain/protected-refs/protected-refs.ts';
import { createTag, MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { readableRevision, validRefName, ZERO_ID } from '../../../domain/repositories/ref-names.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { canOnProject, type ProjectAction } from '../../../domain/permissions/project.policy.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { descendantGroupIds, namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { createMarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import {
  findRelease, groupReleasesQuery, latestRelease, milestonesByTitles, projectReleasesQuery, projectsOfNamespaces,
} from '../../../domain/releases/releases.queries.ts';
import { LINK_TYPES } from '../../../domain/releases/link-attributes.ts';
import { createRelease, deleteRelease, releaseLinksRefusal, updateRelease } from '../../../domain/releases/write-release.ts';
import { ApiError, forbidden, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { rejectNulBytes } from '../../input/string-guards.ts';
import { paginate, paginateArray, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadGroup, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { refActorOf, repositoryReadOnly } from '../../loaders/repository.ts';
import { BasicReleaseSchema, presentBasicRelease, ReleaseSchema } from '../../entities/release.ts';
import { route } from '../../route.ts';
import { presentReleases, type ReleaseOwner } from './release-presenting.ts';

/** Release descriptions: Gitlab::Database::MAX_TEXT_SIZE_LIMIT of the Service. */
export const MAX_DESCRIPTION = 1_000_000;

const idParam = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const tagParam = { tag_name: P.name({ description: 'the tag of the release (URL-encoded)' }) };
const milestonesParam = P.optional(P.array(P.name(), { commaSeparated: true, description: 'milestone titles' }));
const includeHtml = P.optional(P.boolean({ description: 'adds description_html, the description rendered' }));

const listParams = defineParams({
  ...idParam,
  order_by: P.optional(P.oneOf(['released_at', 'created_at'] as const, { default: 'released_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  include_html_description: includeHtml,
  ...paginationParams,
});
const groupListParams = defineParams({
  id: P.string({ description: 'ID or URL-encoded full path of the group' }),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  simple: P.optional(P.boolean({ default: false, description: 'only the basic fields of each release' })),
  ...paginationParams,
});
const oneParams = defineParams({ ...idParam, ...tagParam, include_html_description: includeHtml });
const latestParams = defineParams({ ...idParam, '*': P.optional(P.string({ maxLength: 4096, description: 'suffix path' })) });
const linkObject = P.object({
  name: P.name(),
  url: P.string({ maxLength: 2048 }),
  filepath: P.optional(P.string({ maxLength: 1024 })),
  link_type: P.optional(P.oneOf(LINK_TYPES)),
});
const createParams = defineParams({
  ...idParam, ...tagParam,
  tag_message: P.optional(P.string({ description: 'makes the new tag annotated' })),
  name: P.optional(P.name()),
  description: P.optional(P.string({ maxLength: MAX_DESCRIPTION })),
  ref: P.optional(P.name({ description: 'branch, tag or commit to tag when the tag does not exist' })),
  assets: P.optional(P.object({ links: P.optional(P.array(linkObject, { maxItems: 100 })) })),
  milestones: milestonesParam,
  released_at: P.optional(P.dateTime()),
  job_token: P.optional(P.string({ description: 'a CI job token, also accepted as the JOB-TOKEN header' })),
});
const updateParams = defineParams({
  ...idParam, ...tagParam,
  name: P.optional(P.name()),
  description: P.optional(P.string({ maxLength: MAX_DESCRIPTION })),
  released_at: P.optional(P.dateTime()),
  milestones: milestonesParam,
});

const releases: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const renderer = createMarkdownRenderer();
  app.addHook('onClose', () => renderer.close());

  async function present(request: FastifyRequest, ctx: ProjectContext, rows: ReleaseRow[], html = false) {
    const fullPath = `${ctx.namespace.fullPath}/${ctx.project.path}`;
    const owners = new Map([[ctx.project.id, { project: ctx.project, fullPath, actor: ctx.actor }]]);
    return presentReleases(request, renderer, owners, rows, html);
  }

  async function findTag(ctx: ProjectContext, name: string): Promise<RefEntry | undefined> {
    if (!validRefName(name)) return undefined;
    const [ref] = await listRefs(projectRepository(config.storages, ctx.project).gitDir, 'refs/tags/', name);
    return ref;
  }

  /** The milestones of these titles, the project's and its group's (Releases::BaseService#milestones). */
  async function milestonesOf(ctx: ProjectContext, titles: string[]): Promise<MilestoneRow[]> {
    const unique = [...new Set(titles)];
    const groupIds = ctx.namespace.namespace.kind === 'group' ? [ctx.namespace.namespace.id] : [];
    const found = await milestonesByTitles(db, ctx.project.id, groupIds, unique);
    const missing = unique.filter((t) => !found.some((m) => m.title === t));
    if (missing.length) throw new ApiError(400, { message: `Milestone(s) not found: ${missing.join(', ')}` });
    return found;
  }

  /** The Service authorizes update and destroy on the release itself: no release, no permission (403). */
  function authorizeOnRelease(ctx: ProjectContext, release: ReleaseRow | undefined, action: ProjectAction): ReleaseRow {
    if (!release || !canOnProject(ctx.actor, action, ctx.project)) throw forbidden();
    return release;
  }

  // A group's releases (Releases::GroupReleasesFinder): those of the projects of the group and its
  // subgroups whose releases the viewer may read, by released_at; `simple` gives BasicReleaseDetails.
  route(app, {
    method: 'GET', url: '/groups/:id/releases', auth: 'optional', params: groupListParams,
    schema: {
      summary: "The releases of a group's projects", tags: ['releases'],
      response: { 200: Type.Array(Type.Union([ReleaseSchema, BasicReleaseSchema])) },
    },
  }, async ({ request, reply, input }) => {
    const group = await loadGroup(request, input.id);
    const namespaceIds = [group.group.id, ...(await descendantGroupIds(db, [group.group.id])).keys()];
    const projects = await projectsOfNamespaces(db, namespaceIds);
    const paths = await namespacePathsById(db, [...new Set(projects.map((p) => p.namespace_id))]);
    const owners = new Map<number, ReleaseOwner>();
    const viewer = request.caller?.user ?? null;
    for (const project of projects) {
      const ns = paths.get(project.namespace_id);
      if (!ns) continue;
      const actor = await projectActor(db, viewer, project.id, ns.lineage);
      if (canOnProject(actor, 'read_project', project) && canOnProject(actor, 'read_release', project)) {
        owners.set(project.id, { project, fullPath: `${ns.fullPath}/${project.path}`, actor });
      }
    }
    // No readable project, no query: there is nothing to list.
    const rows = owners.size ? await paginate(db, request, reply, groupReleasesQuery(db, [...owners.keys()], input.sort))
      : paginateArray(request, reply, [] as ReleaseRow[]);
    if (input.simple) return rows.map((r) => presentBasicRelease(r));
    return presentReleases(request, renderer, owners, rows, false);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/releases', auth: 'optional', jobToken: true, params: listParams,
    schema: { summary: "A project's releases", tags: ['releases'], response: { 200: Type.Array(ReleaseSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_release');
    const rows = await paginate(db, request, reply, projectReleasesQuery(db, ctx.project.id, input.order_by, input.sort));
    return present(request, ctx, rows, input.include_html_description === true);
  });

  // The permalink of the latest release (by released_at) redirects to that release's own path, its
  // sub-paths (e.g. /assets/links) and query kept, `order_by` left out (the Service reserves it).
  for (const url of ['/projects/:id/releases/permalink/latest', '/projects/:id/releases/permalink/latest/*']) {
    route(app, {
      method: 'GET', url, auth: 'optional', jobToken: true, params: latestParams,
      schema: { summary: 'Redirects to the latest release', tags: ['releases'] },
    }, async ({ request, reply, input }) => {
      const ctx = await loadProject(request, input.id);
      authorizeProject(ctx, 'read_release');
      authorizeProject(ctx, 'download_code');
      const latest = await latestRelease(db, ctx.project.id);
      if (!latest) throw notFound();
      let target = `/api/v4/projects/${ctx.project.id}/releases/${encodeURIComponent(latest.tag)}`;
      const suffix = input['*'];
      if (suffix) target += `/${suffix.split('/').map(encodeURIComponent).join('/')}`;
      const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
      query.delete('order_by');
      const rest = query.toString();
      const base = new URL(config.externalUrl).pathname.replace(/\/$/, '');
      return reply.redirect(`${base}${target}${rest ? `?${rest}` : ''}`, 302);
    });
  }

  route(app, {
    method: 'GET', url: '/projects/:id/releases/:tag_name', auth: 'optional', jobToken: true, params: oneParams,
    schema: { summary: 'One release', tags: ['releases'], response: { 200: ReleaseSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_release');
    authorizeProject(ctx, 'download_code');
    const release = await findRelease(db, ctx.project.id, input.tag_name);
    if (!release) throw notFound();
    return (await present(request, ctx, [release], input.include_html_description === true))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/releases', auth: 'required', jobToken: true, params: createParams,
    schema: { summary: 'Create a release', tags: ['releases'], response: { 201: ReleaseSchema } },
  }, async ({ request, reply, input, caller }) => {
    rejectNulBytes(input, ['tag_message']);
    if (input.tag_message && Buffer.byteLength(input.tag_message) > MAX_MESSAGE_BYTES) throw invalidParams(['tag_message is too long']);
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_release');
    authorizeProject(ctx, 'create_release');
    if (await findRelease(db, ctx.project.id, input.tag_name)) throw new ApiError(409, { message: 'Release already exists' });
    const milestones = await milestonesOf(ctx, input.milestones ?? []);
    const links = (input.assets?.links ?? []).map((l) => ({
      name: l.name, url: l.url, filepath: l.filepath || null, link_type: l.link_type ?? 'other',
    }));
    const refusal = releaseLinksRefusal(links);
    if (refusal) throw new ApiError(400, { message: refusal });
    let tag = await findTag(ctx, input.tag_name);
    if (!tag) {
      if (!input.ref) throw new ApiError(422, { message: 'Ref is not specified' });
      if (ctx.project.read_only === 1) throw repositoryReadOnly();
      const user = caller.user;
      const repo = projectRepository(config.storages, ctx.project);
      // Tags::CreateService runs the push checks: a protected tag is created only by those its create level admits.
      const target = validRefName(input.tag_name) && readableRevision(input.ref) ? await resolveCommit(repo.gitDir, input.ref) : null;
      if (target) {
        const refusal = await apiRefChangeRefusal(db, {
          projectId: ctx.project.id, gitDir: repo.gitDir, actor: refActorOf(ctx), emptyRepo: ctx.project.empty_repo === 1,
          defaultBranch: ctx.project.default_branch, ref: `refs/tags/${input.tag_name}`, oldrev: ZERO_ID, newrev: target,
        });
        if (refusal) throw new ApiError(400, { message: refusal });
      }
      const result = await createTag(db, repo, {
        name: input.tag_name, ref: input.ref, message: input.tag_message || null,
        tagger: { name: user.name, email: user.commit_email || user.email },
      });
      if (!result.ok) {
        if (result.reason === 'read_only') throw repositoryReadOnly();
        throw new ApiError(result.reason === 'exists' ? 409 : 400, { message: result.message });
      }
      await afterRefUpdate(
        ciEnvFrom(db, config), ctx.project, [result.update], user.id,
        (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
      );
      tag = await findTag(ctx, input.tag_name);
      if (!tag) throw notFound('Tag');
    }
    const result = await createRelease(db, {
      projectId: ctx.project.id, tag: input.tag_name, sha: tag.commitId, name: input.name ?? null,
      description: input.description ?? null, authorId: caller.user.id, releasedAt: input.released_at ?? null,
      milestones, links,
    });
    if (!result.ok) throw new ApiError(result.status, { message: result.message });
    reply.code(201);
    return (await present(request, ctx, [result.release]))[0];
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/releases/:tag_name', auth: 'required', jobToken: true, params: updateParams,
    schema: { summary: 'Update a release', tags: ['releases'], response: { 200: ReleaseSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_release');
    const release = authorizeOnRelease(ctx, await findRelease(db, ctx.project.id, input.tag_name), 'update_release');
    if (!(await findTag(ctx, input.tag_name))) throw new ApiError(404, { message: 'Tag does not exist' });
    if (input.name === undefined && input.description === undefined && input.released_at === undefined && input.milestones === undefined) {
      throw new ApiError(400, { message: 'params is empty' });
    }
    const milestones = input.milestones === undefined ? undefined : await milestonesOf(ctx, input.milestones);
    const updated = await updateRelease(db, release, {
      name: input.name, description: input.description, releasedAt: input.released_at, milestones,
    });
    return (await present(request, ctx, [updated]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/releases/:tag_name', auth: 'required', jobToken: true,
    params: defineParams({ ...idParam, ...tagParam }),
    schema: { summary: 'Delete a release (the tag stays)', tags: ['releases'], response: { 200: ReleaseSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_release');
    const release = authorizeOnRelease(ctx, await findRelease(db, ctx.project.id, input.tag_name), 'destroy_release');
    if (!(await findTag(ctx, input.tag_name))) throw new ApiError(404, { message: 'Tag does not exist' });
    // Presented before it goes, as the Service presents the destroyed record.
    const [entity] = await present(request, ctx, [release]);
    await deleteRelease(db, release.id);
    return entity;
  });
};

export default releases;
