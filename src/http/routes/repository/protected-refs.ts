/**
 * Protected branches and tags of a project (the Service's API::ProtectedBranches and
 * API::ProtectedTags, 15.2 CE): list (branches searchable by name), show by name or wildcard
 * pattern (URL-encoded when it holds slashes), protect, unprotect, and changing a protected
 * branch's allow_force_push. Every route is the Maintainer's (`authorize_admin_project`).
 *
 * CE takes role-based access levels only (0 no one, 30 developers + maintainers, 40 maintainers;
 * default 40): the Premium parameters (`allowed_to_push`, `allowed_to_merge`, `allowed_to_unprotect`,
 * `unprotect_access_level`, `code_owner_approval_required`) are not declared and so ignored, as
 * CE's Grape ignores them. PATCH arrived in CE with 15.6 (allow_force_push only); kiln serves it
 * so a branch's force-push setting can change without unprotecting it.
 *
 * What protection means for pushes, API writes and CI lives in src/domain/protected-refs/.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError, conflict, invalidParams, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { route } from '../../route.ts';
import {
  ProtectedBranchSchema, ProtectedTagSchema, presentProtectedBranch, presentProtectedTag,
} from '../../entities/protected-ref.ts';
import { ALLOWED_ACCESS_LEVELS, MAINTAINER } from '../../../domain/protected-refs/access-levels.ts';
import { protectBranch, protectTag } from '../../../domain/protected-refs/protected-refs.ts';
import {
  branchAccessLevels, deleteProtectedBranch, deleteProtectedTag, findProtectedBranch, findProtectedTag, protectedBranchesQuery,
  protectedTagsQuery, tagCreateAccessLevels, updateProtectedBranchForcePush,
} from '../../../domain/protected-refs/protected-refs.queries.ts';
import { nowIso } from '../../../domain/clock.ts';

const LEVELS_TEXT = '0 (no one), 30 (developers + maintainers) or 40 (maintainers, the default)';

const branchListParams = defineParams({
  id: P.string(),
  search: P.optional(P.name({ description: 'part of the name' })),
  ...paginationParams,
});
const branchOneParams = defineParams({ id: P.string(), name: P.name({ description: 'the branch name or wildcard' }) });
const branchCreateParams = defineParams({
  id: P.string(),
  name: P.name({ description: 'the branch name or a wildcard such as release-*' }),
  push_access_level: P.optional(P.integer({ description: LEVELS_TEXT })),
  merge_access_level: P.optional(P.integer({ description: LEVELS_TEXT })),
  allow_force_push: P.optional(P.boolean({ default: false, description: 'allow force pushes to those who may push' })),
});
const branchUpdateParams = defineParams({
  id: P.string(),
  name: P.name({ description: 'the branch name or wildcard' }),
  allow_force_push: P.optional(P.boolean({ description: 'allow force pushes to those who may push' })),
});
const tagListParams = defineParams({ id: P.string(), ...paginationParams });
const tagOneParams = defineParams({ id: P.string(), name: P.name({ description: 'the tag name or wildcard' }) });
const tagCreateParams = defineParams({
  id: P.string(),
  name: P.name({ description: 'the tag name or a wildcard such as v*' }),
  create_access_level: P.optional(P.integer({ default: MAINTAINER, description: LEVELS_TEXT })),
});

/** Grape's `values:` check of the access levels, every refused parameter named as Grape joins them. */
function checkLevels(levels: Record<string, number | undefined>): void {
  const bad = Object.entries(levels).filter(([, v]) => v !== undefined && !(ALLOWED_ACCESS_LEVELS as readonly number[]).includes(v));
  if (bad.length > 0) throw invalidParams(bad.map(([k]) => `${k} does not have a valid value`));
}

const protectedRefs: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  /** The project as the caller may see it (404), and Maintainer or above (403): `authorize_admin_project`. */
  async function loadAdmin(request: FastifyRequest, id: string): Promise<ProjectContext> {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'admin_project');
    return ctx;
  }

  async function presentBranches(rows: Parameters<typeof presentProtectedBranch>[0][]) {
    const levels = await branchAccessLevels(db, rows.map((r) => r.id));
    return rows.map((r) => presentProtectedBranch(r, levels));
  }

  async function presentTags(rows: Parameters<typeof presentProtectedTag>[0][]) {
    const levels = await tagCreateAccessLevels(db, rows.map((r) => r.id));
    return rows.map((r) => presentProtectedTag(r, levels));
  }

  route(app, {
    method: 'GET', url: '/projects/:id/protected_branches', auth: 'optional', params: branchListParams,
    schema: {
      summary: "A project's protected branches", tags: ['protected_branches'], response: { 200: Type.Array(ProtectedBranchSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadAdmin(request, input.id);
    return presentBranches(await paginate(db, request, reply, protectedBranchesQuery(db, ctx.project.id, input.search)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/protected_branches/:name', auth: 'optional', params: branchOneParams,
    schema: { summary: 'One protected branch', tags: ['protected_branches'], response: { 200: ProtectedBranchSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadAdmin(request, input.id);
    const row = await findProtectedBranch(db, ctx.project.id, input.name);
    if (!row) throw recordNotFound();
    return (await presentBranches([row]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/protected_branches', auth: 'required', params: branchCreateParams,
    schema: { summary: 'Protect a branch or a wildcard', tags: ['protected_branches'], response: { 201: ProtectedBranchSchema } },
  }, async ({ request, reply, input }) => {
    checkLevels({ push_access_level: input.push_access_level, merge_access_level: input.merge_access_level });
    const ctx = await loadAdmin(request, input.id);
    if (await findProtectedBranch(db, ctx.project.id, input.name)) throw conflict(`Protected branch '${input.name}' already exists`);
    const result = await protectBranch(db, ctx.project.id, {
      name: input.name, push: input.push_access_level ?? MAINTAINER, merge: input.merge_access_level ?? MAINTAINER,
      allowForcePush: input.allow_force_push,
    });
    if (!result.ok) {
      if (result.reason === 'exists') throw conflict(`Protected branch '${input.name}' already exists`);
      throw new ApiError(422, { message: ["Name can't be blank"] });
    }
    reply.code(201);
    return (await presentBranches([result.value]))[0];
  });

  route(app, {
    method: 'PATCH', url: '/projects/:id/protected_branches/:name', auth: 'required', params: branchUpdateParams,
    schema: {
      summary: "Change a protected branch's allow_force_push", tags: ['protected_branches'], response: { 200: ProtectedBranchSchema },
    },
  }, async ({ request, input }) => {
    const ctx = await loadAdmin(request, input.id);
    const row = await findProtectedBranch(db, ctx.project.id, input.name);
    if (!row) throw recordNotFound();
    if (input.allow_force_push !== undefined) await updateProtectedBranchForcePush(db, row.id, input.allow_force_push, nowIso());
    const updated = await findProtectedBranch(db, ctx.project.id, input.name);
    if (!updated) throw recordNotFound();
    return (await presentBranches([updated]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/protected_branches/:name', auth: 'required', params: branchOneParams,
    schema: { summary: 'Unprotect a branch or a wildcard', tags: ['protected_branches'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadAdmin(request, input.id);
    const row = await findProtectedBranch(db, ctx.project.id, input.name);
    if (!row) throw recordNotFound();
    checkUnmodifiedSince(request, row.updated_at);
    await deleteProtectedBranch(db, row.id);
    reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/projects/:id/protected_tags', auth: 'optional', params: tagListParams,
    schema: { summary: "A project's protected tags", tags: ['protected_tags'], response: { 200: Type.Array(ProtectedTagSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadAdmin(request, input.id);
    return presentTags(await paginate(db, request, reply, protectedTagsQuery(db, ctx.project.id)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/protected_tags/:name', auth: 'optional', params: tagOneParams,
    schema: { summary: 'One protected tag', tags: ['protected_tags'], response: { 200: ProtectedTagSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadAdmin(request, input.id);
    const row = await findProtectedTag(db, ctx.project.id, input.name);
    if (!row) throw recordNotFound();
    return (await presentTags([row]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/protected_tags', auth: 'required', params: tagCreateParams,
    schema: { summary: 'Protect a tag or a wildcard', tags: ['protected_tags'], response: { 201: ProtectedTagSchema } },
  }, async ({ request, reply, input }) => {
    checkLevels({ create_access_level: input.create_access_level });
    const ctx = await loadAdmin(request, input.id);
    const result = await protectTag(db, ctx.project.id, { name: input.name, create: input.create_access_level });
    // ProtectedTags::CreateService answers with the record's validation errors (422).
    if (!result.ok) {
      throw new ApiError(422, { message: [result.reason === 'exists' ? 'Name has already been taken' : "Name can't be blank"] });
    }
    reply.code(201);
    return (await presentTags([result.value]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/protected_tags/:name', auth: 'required', params: tagOneParams,
    schema: { summary: 'Unprotect a tag or a wildcard', tags: ['protected_tags'] },
  }, async ({ request, reply, input }) => {
    const ctx = await loadAdmin(request, input.id);
    const row = await findProtectedTag(db, ctx.project.id, input.name);
    if (!row) throw recordNotFound();
    checkUnmodifiedSince(request, row.updated_at);
    await deleteProtectedTag(db, row.id);
    reply.code(204).send();
  });
};

export default protectedRefs;
