/**
 * The badge images READMEs embed, outside the API prefix (the Service's
 * Projects::BadgesController#pipeline and #coverage, issue 33 item 5):
 *
 *   GET /<namespace…>/<project>/badges/<ref>/pipeline.svg  (ignore_skipped, key_text, key_width, style)
 *   GET /<namespace…>/<project>/badges/<ref>/coverage.svg  (job, key_text, key_width, min_good,
 *                                                            min_acceptable, min_medium, style)
 *
 * The ref may hold slashes. Who may read the project's jobs (read_build: its members, and anyone
 * who sees it while "public pipelines" is on) gets the image; anyone else the 404 a hidden project
 * answers. The answer carries the Service's no-cache headers (ApplicationController#no_cache_headers)
 * so a README shows the status of now; kiln keeps it cheap instead, with compiled reads remembered
 * until the next write (domain/badges/badge-images.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { MAX_NAMESPACE_DEPTH } from '../../../domain/namespaces/namespaces.queries.ts';
import { badgeStyle, coverageBadge, pipelineBadge, renderBadgeSvg } from '../../../domain/badges/badge-images.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { ApiError, notFound } from '../../errors.ts';
import { loadProject } from '../../loaders/containers.ts';

/** ActionDispatch's default Cache-Control with no-store and no-cache (Gitlab::NoCacheHeaders). */
const NO_CACHE = 'max-age=0, private, must-revalidate, no-store, no-cache';
const EXPIRED = 'Fri, 01 Jan 1990 00:00:00 GMT';
const IMAGE = /^(.+)\/(pipeline|coverage)\.svg$/s;

const badgeImages: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  // One route per nesting depth (find-my-way matches a fixed number of segments before a
  // wildcard). "badges" is a reserved word for projects and sub-groups (namespaces/paths.ts
  // PROJECT_WILDCARD_ROUTES), so these routes mask no project.
  for (let depth = 1; depth <= MAX_NAMESPACE_DEPTH; depth += 1) {
    const prefix = ['', ...Array.from({ length: depth }, (_, i) => `:ns${i}`), ':project'].join('/');
    app.get(`${prefix}/badges/*`, {
      config: { auth: 'optional' },
      schema: { hide: true },
    }, async (request, reply) => {
      const p = request.params as Record<string, string>;
      const image = IMAGE.exec(p['*'] ?? '');
      const fullPath = [...Array.from({ length: depth }, (_, i) => p[`ns${i}`]), p.project].join('/');
      if (!image || fullPath.length > 2048 || !isStorableText(fullPath)) throw notFound();
      const ctx = await loadProject(request, fullPath).catch((err: unknown) => {
        if (err instanceof ApiError && err.statusCode === 404) return null;
        throw err;
      });
      // Projects::BadgesController: authorize_read_build!, whose denial is the project's 404.
      if (!ctx || !canOnProject(ctx.actor, 'read_build', ctx.project)) throw notFound();
      const query = request.query as Record<string, unknown>;
      const [, ref, kind] = image;
      const badge = kind === 'pipeline'
        ? await pipelineBadge(db, ctx.project.id, ref, query)
        : await coverageBadge(db, ctx.project.id, ref, query);
      return reply.type('image/svg+xml; charset=utf-8')
        .header('cache-control', NO_CACHE).header('expires', EXPIRED)
        .header('x-content-type-options', 'nosniff')
        .send(renderBadgeSvg(badge, badgeStyle(query.style)));
    });
  }
};

export default badgeImages;
