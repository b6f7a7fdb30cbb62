/**
 * A release's asset links (lib/api/release/links.rb of the Service 15.2): list, one, create,
 * update, delete. The release is found by tag and the link by id within it (`404 Not found`, the
 * Service's find_by!); reading takes read_release, writing create_release / update_release /
 * destroy_release. A refused link answers Releases::Link's errors by attribute (400): a url that
 * is no http, https or ftp address, a bad direct asset path, and a name or url another link of
 * the release has ("has already been taken", settled by the unique indexes when two writes race).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { ReleaseLinkRow, ReleaseRow } from '../../../db/tables/releases.ts';
import { isUniqueViolation } from '../../../db/constraints.ts';
import { nowIso } from '../../../domain/clock.ts';
import { canOnProject, type ProjectAction } from '../../../domain/permissions/project.policy.ts';
import {
  deleteLinkRow, findLink, findRelease, insertLink, linksQuery, takenLinkFields, updateLinkRow,
} from '../../../domain/releases/releases.queries.ts';
import { LINK_TYPES, linkErrors, type LinkAttributes } from '../../../domain/releases/link-attributes.ts';
import { forbidden, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { presentReleaseLink, releaseWebUrl, ReleaseLinkSchema } from '../../entities/release.ts';
import { route } from '../../route.ts';

const releaseParams = {
  id: P.string({ description: 'ID or URL-encoded full path of the project' }),
  tag_name: P.name({ description: 'the tag of the release (URL-encoded)' }),
};
const linkParams = { ...releaseParams, link_id: P.integer() };
const fields = {
  name: P.name(),
  url: P.string({ maxLength: 2048 }),
  filepath: P.string({ maxLength: 1024, description: 'the direct asset path, `/dir/file`' }),
  link_type: P.oneOf(LINK_TYPES),
};

const releaseLinks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function load(request: Parameters<typeof loadProject>[0], id: string, tag: string, action: ProjectAction) {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'read_release');
    const release = await findRelease(db, ctx.project.id, tag);
    if (!release) throw recordNotFound();
    if (!canOnProject(ctx.actor, action, ctx.project)) throw forbidden();
    return { ctx, release };
  }

  function present(ctx: ProjectContext, release: ReleaseRow, link: ReleaseLinkRow) {
    const projectWebUrl = `${config.externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`;
    return presentReleaseLink(link, releaseWebUrl(projectWebUrl, release.tag), projectWebUrl);
  }

  /** Releases::Link's validation, then the write; a race past the check ends at the unique index. */
  async function write(
    releaseId: number, a: LinkAttributes, exceptId: number | undefined, save: () => Promise<ReleaseLinkRow | undefined>,
  ) {
    const errors = linkErrors(a);
    const taken = await takenLinkFields(db, releaseId, a.name, a.url, exceptId);
    for (const field of taken) (errors[field] ??= []).push('has already been taken');
    if (Object.keys(errors).length) throw validationFailed(errors);
    try {
      return await save();
    } catch (err) {
      if (isUniqueViolation(err)) throw validationFailed({ url: ['has already been taken'] });
      throw err;
    }
  }

  route(app, {
    method: 'GET', url: '/projects/:id/releases/:tag_name/assets/links', auth: 'optional', jobToken: true,
    params: defineParams({ ...releaseParams, ...paginationParams }),
    schema: { summary: "A release's links", tags: ['releases'], response: { 200: Type.Array(ReleaseLinkSchema) } },
  }, async ({ request, reply, input }) => {
    const { ctx, release } = await load(request, input.id, input.tag_name, 'read_release');
    const rows = await paginate(db, request, reply, linksQuery(db, release.id));
    return rows.map((l) => present(ctx, release, l));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/releases/:tag_name/assets/links/:link_id', auth: 'optional', jobToken: true,
    params: defineParams(linkParams),
    schema: { summary: 'One link of a release', tags: ['releases'], response: { 200: ReleaseLinkSchema } },
  }, async ({ request, input }) => {
    const { ctx, release } = await load(request, input.id, input.tag_name, 'read_release');
    const link = await findLink(db, release.id, input.link_id);
    if (!link) throw recordNotFound();
    return present(ctx, release, link);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/releases/:tag_name/assets/links', auth: 'required', jobToken: true,
    params: defineParams({
      ...releaseParams, name: fields.name, url: fields.url, filepath: P.optional(fields.filepath), link_type: P.optional(fields.link_type),
    }),
    schema: { summary: 'Add a link to a release', tags: ['releases'], response: { 201: ReleaseLinkSchema } },
  }, async ({ request, reply, input }) => {
    const { ctx, release } = await load(request, input.id, input.tag_name, 'create_release');
    const a: LinkAttributes = { name: input.name, url: input.url, filepath: input.filepath || null, link_type: input.link_type ?? 'other' };
    const now = nowIso();
    const link = await write(
      release.id, a, undefined, () => insertLink(db, { release_id: release.id, ...a, created_at: now, updated_at: now }),
    );
    reply.code(201);
    return present(ctx, release, link!);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/releases/:tag_name/assets/links/:link_id', auth: 'required', jobToken: true,
    params: defineParams({
      ...linkParams, name: P.optional(fields.name), url: P.optional(fields.url), filepath: P.optional(fields.filepath),
      link_type: P.optional(fields.link_type),
    }, { atLeastOneOf: [['name', 'url', 'filepath', 'link_type']] }),
    schema: { summary: 'Update a link of a release', tags: ['releases'], response: { 200: ReleaseLinkSchema } },
  }, async ({ request, input }) => {
    const { ctx, release } = await load(request, input.id, input.tag_name, 'update_release');
    const link = await findLink(db, release.id, input.link_id);
    if (!link) throw recordNotFound();
    const a: LinkAttributes = {
      name: input.name ?? link.name, url: input.url ?? link.url,
      filepath: input.filepath === undefined ? link.filepath : input.filepath || null,
      link_type: input.link_type ?? (link.link_type as LinkAttributes['link_type']),
    };
    const updated = await write(release.id, a, link.id, () => updateLinkRow(db, link.id, { ...a, updated_at: nowIso() }));
    if (!updated) throw recordNotFound();
    return present(ctx, release, updated);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/releases/:tag_name/assets/links/:link_id', auth: 'required', jobToken: true,
    params: defineParams(linkParams),
    schema: { summary: 'Delete a link of a release', tags: ['releases'], response: { 200: ReleaseLinkSchema } },
  }, async ({ request, input }) => {
    const { ctx, release } = await load(request, input.id, input.tag_name, 'destroy_release');
    const link = await findLink(db, release.id, input.link_id);
    if (!link) throw recordNotFound();
    await deleteLinkRow(db, link.id);
    return present(ctx, release, link);
  });
};

export default releaseLinks;
