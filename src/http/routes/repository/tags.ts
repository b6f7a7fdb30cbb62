/**
 * Tags of a project's repository (the Service's API::Tags): list, show, create (annotated when a
 * message is given), delete. Reading needs `download_code`, writing `push_code` (the Service's
 * admin_tag is Developer). Every change goes through afterRefUpdate.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { listRefs, refTarget, resolveCommit, type RefEntry } from '../../../domain/repositories/git-read.ts';
import { apiRefChangeRefusal, protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import { isProtectedTag } from '../../../domain/protected-refs/ref-rules.ts';
import { createTag, deleteTag, MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { releasesOfTags } from '../../../domain/releases/releases.queries.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { readableRevision, validRefName, ZERO_ID } from '../../../domain/repositories/ref-names.ts';
import { ApiError, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import { presentTag, TagSchema, type Tag } from '../../entities/branch.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { loadRepository, presentCommits, refActorOf, repositoryReadOnly, type RepositoryContext } from '../../loaders/repository.ts';
import { matchesRefSearch, MAX_REF_SEARCH } from './ref-search.ts';
import { rejectNulBytes } from '../../input/string-guards.ts';
import { route } from '../../route.ts';

const listParams = defineParams({
  id: P.string(),
  order_by: P.optional(P.oneOf(['name', 'updated', 'version'] as const, { default: 'updated' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  search: P.optional(P.string({ description: 'part of the name; ^ anchors the start, $ the end' })),
  ...paginationParams,
});
const oneParams = defineParams({ id: P.string(), tag_name: P.string() });
const createParams = defineParams({
  id: P.string(),
  tag_name: P.string(),
  ref: P.string({ description: 'branch, tag or commit to tag' }),
  message: P.optional(P.string({ description: 'makes an annotated tag' })),
});

const versionOrder = new Intl.Collator('en', { numeric: true });

const tags: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function present(ctx: RepositoryContext, refs: RefEntry[]): Promise<Tag[]> {
    const [commits, rules, releases] = await Promise.all([
      presentCommits(ctx, refs.map((r) => r.commitId)),
      protectionRulesFor(db, ctx.project.id),
      releasesOfTags(db, ctx.project.id, refs.map((r) => r.name)),
    ]);
    return refs.map((r) => {
      const release = releases.get(r.name);
      const entity = release ? { tag_name: release.tag, description: release.description } : null;
      return presentTag(r.name, r.target, r.tagMessage, commits.get(r.commitId)!, isProtectedTag(rules, r.name), entity);
    });
  }

  async function findTag(ctx: RepositoryContext, name: string): Promise<RefEntry> {
    const [ref] = validRefName(name) ? await listRefs(ctx.repo.gitDir, 'refs/tags/', name) : [];
    if (!ref) throw notFound('Tag');
    return ref;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/tags', auth: 'optional', params: listParams,
    schema: { summary: "A project's tags", tags: ['tags'], response: { 200: Type.Array(TagSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    if (input.search && input.search.length > MAX_REF_SEARCH) return paginateArray(request, reply, []);
    let refs = await listRefs(ctx.repo.gitDir, 'refs/tags/');
    if (input.search) refs = refs.filter((r) => matchesRefSearch(r.name, input.search!));
    const byName = (a: RefEntry, b: RefEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const compare = input.order_by === 'name' ? byName
      : input.order_by === 'version' ? (a: RefEntry, b: RefEntry) => versionOrder.compare(a.name, b.name)
        : (a: RefEntry, b: RefEntry) => Date.parse(a.committedDate) - Date.parse(b.committedDate) || byName(a, b);
    refs.sort((a, b) => compare(a, b) * (input.sort === 'asc' ? 1 : -1));
    return present(ctx, paginateArray(request, reply, refs));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/tags/:tag_name', auth: 'optional', params: oneParams,
    schema: { summary: 'One tag', tags: ['tags'], response: { 200: TagSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    return (await present(ctx, [await findTag(ctx, input.tag_name)]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/repository/tags', auth: 'required', params: createParams,
    schema: { summary: 'Create a tag', tags: ['tags'], response: { 201: TagSchema } },
  }, async ({ request, reply, input, caller }) => {
    rejectNulBytes(input, ['message']);
    if (input.message && Buffer.byteLength(input.message) > MAX_MESSAGE_BYTES) throw invalidParams(['message is too long']);
    const ctx = await loadRepository(request, input.id, 'write');
    // A protected tag is created only by those its create level admits (TagCheck, from the web).
    const target = validRefName(input.tag_name) && readableRevision(input.ref) ? await resolveCommit(ctx.repo.gitDir, input.ref) : null;
    if (target && !await refTarget(ctx.repo.gitDir, `refs/tags/${input.tag_name}`)) {
      const refusal = await apiRefChangeRefusal(db, {
        projectId: ctx.project.id, gitDir: ctx.repo.gitDir, actor: refActorOf(ctx), emptyRepo: ctx.project.empty_repo === 1,
        defaultBranch: ctx.project.default_branch, ref: `refs/tags/${input.tag_name}`, oldrev: ZERO_ID, newrev: target,
      });
      if (refusal) throw new ApiError(400, { message: refusal });
    }
    const user = caller.user;
    const result = await createTag(db, ctx.repo, {
      name: input.tag_name, ref: input.ref, message: input.message || null, tagger: {
        name: user.name, email: user.commit_email || user.email,
      },
    });
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(400, { message: result.message });
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    reply.code(201);
    return (await present(ctx, [await findTag(ctx, input.tag_name)]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/repository/tags/:tag_name', auth: 'required', params: oneParams,
    schema: { summary: 'Delete a tag', tags: ['tags'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadRepository(request, input.id, 'write');
    const tag = await findTag(ctx, input.tag_name);
    checkUnmodifiedSince(request, tag.committedDate);
    // Tags::DestroyService: the pre-receive check never lets a protected tag go (CE 15.2).
    const refusal = await apiRefChangeRefusal(db, {
      projectId: ctx.project.id, gitDir: ctx.repo.gitDir, actor: refActorOf(ctx), emptyRepo: false,
      defaultBranch: ctx.project.default_branch, ref: `refs/tags/${input.tag_name}`, oldrev: tag.target, newrev: ZERO_ID,
    });
    if (refusal) throw new ApiError(400, { message: refusal });
    const result = await deleteTag(db, ctx.repo, input.tag_name);
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(result.reason === 'not_found' ? 404 : 400, { message: result.message });
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], caller.user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    reply.code(204).send();
  });
};

export default tags;
