/**
 * POST /markdown (lib/api/markdown.rb, doc/api/markdown.md, 15.2): renders a Markdown text as the
 * Service does, answering 201 `{"html": "…"}` (a Grape POST). It reads nothing it does not show:
 * read_api tokens may call it, and so may anonymous callers (authentication became required in
 * 15.3 behind `authenticate_markdown_api`).
 *
 * `gfm` picks the full GitLab Flavored Markdown pipeline (default: plain CommonMark with GFM
 * tables, domain/markdown/render.ts). `project` is a full path the caller must be able to read
 * (`404 Project Not Found` otherwise, as for a missing one); it is the context of `#1`, `~label`,
 * `%milestone` and `@all` references. Without it only `@user` references link.
 *
 * `text` is bounded at 1,048,576 characters (the Service's longest text fields; beyond it 400):
 * the Service sets no bound of its own.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { createMarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { notFound } from '../../errors.ts';
import { DEFAULT_MAX_STRING, defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { referenceResolverFor } from '../../markdown-references.ts';
import { route } from '../../route.ts';

/** Full paths are at most 20 levels of 255-character names (namespaces' depth limit). */
const MAX_PROJECT_PATH = 20 * 256;

const params = defineParams({
  text: P.string({ maxLength: DEFAULT_MAX_STRING, description: 'The Markdown text to render' }),
  gfm: P.optional(P.boolean({ description: 'Render text using GitLab Flavored Markdown. Default is false' })),
  project: P.optional(P.string({
    maxLength: MAX_PROJECT_PATH,
    description: 'Full path of the project used as the context of references (GitLab Flavored Markdown)',
  })),
});

const MarkdownSchema = Type.Object({ html: Type.String() });

const markdown: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const ownHost = new URL(config.externalUrl).host;
  // Long texts render in worker threads, so that one does not stall every other request.
  const renderer = createMarkdownRenderer();
  app.addHook('onClose', () => renderer.close());

  route(app, {
    method: 'POST', url: '/markdown', auth: 'optional', scopes: ['read_api'], params,
    schema: { summary: 'Render an arbitrary Markdown document', tags: ['markdown'], response: { 201: MarkdownSchema } },
  }, async ({ request, reply, input, caller }) => {
    // Project.find_by_full_path: a full path names a project (an id does not), so a path without
    // a namespace names none.
    let project;
    if (input.project !== undefined) {
      if (!input.project.includes('/')) throw notFound('Project');
      project = await loadProject(request, input.project);
    }
    const resolveReferences = referenceResolverFor(db, {
      externalUrl: config.externalUrl, viewer: caller?.user ?? null, ...(project ? { project } : {}),
    });
    const html = await renderer.render(input.text, { gfm: input.gfm === true, resolveReferences, ownHost });
    return reply.code(201).send({ html });
  });
};

export default markdown;
