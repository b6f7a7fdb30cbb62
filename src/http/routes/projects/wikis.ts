/**
 * Project wikis (the Service's lib/api/wikis.rb, 15.2): list the pages (`with_content`), read one
 * by slug (at a `version`, rendered with `render_html`), create, update and delete pages, and
 * commit an attachment to the wiki repository. Pages are files of the project's wiki repository
 * (domain/wikis), the one cloned at `<project>.wiki.git`: a push there shows here.
 *
 * Permissions (ProjectPolicy 15.2): read_wiki for the reads, create_wiki (Developer) to write,
 * admin_wiki (Maintainer) to delete; all follow the wiki feature (wiki_access_level).
 * Group wikis are a paid feature of the Service and are not served.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import {
  createAttachment, createPage, deletePage, findPage, listPages, updatePage, WIKI_FORMATS, type WikiAuthor, type WikiPage,
  type WikiWriteResult,
} from '../../../domain/wikis/wiki-pages.ts';
import { ensureWikiRepository, wikiRepository } from '../../../domain/wikis/wiki-repository.ts';
import { queueWikiPageHook } from '../../../domain/wikis/wiki-page-hooks.ts';
import { repositoryExists } from '../../../domain/repositories/repositories.ts';
import { createMarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { badRequestMessage, invalidParams, missingAttribute, notFound, validationFailed } from '../../errors.ts';
import { bufferFile, isMultipart, multipartParts } from '../../input/multipart.ts';
import type { UploadedFile } from '../../../domain/uploaded-file.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { repositoryReadOnly } from '../../loaders/repository.ts';
import {
  pageText, presentWikiAttachment, presentWikiPage, presentWikiPageBasic, WikiAttachmentSchema, WikiPageBasicSchema, WikiPageSchema,
} from '../../entities/wiki-page.ts';
import { route } from '../../route.ts';

const projectId = P.string({ description: 'project id or URL-encoded path' });
const slug = P.name({ description: 'the slug of the page (URL-encoded: `dir%2Fpage`)', maxLength: 4096 });
const format = P.optional(P.oneOf(WIKI_FORMATS, { default: 'markdown', description: 'markup of the page' }));

const params = {
  list: defineParams({ id: projectId, with_content: P.optional(P.boolean({ default: false, description: "include the pages' content" })) }),
  one: defineParams({
    id: projectId, slug,
    version: P.optional(P.name({ description: 'the commit of the wiki repository to read the page at' })),
    render_html: P.optional(P.boolean({ default: false, description: 'the content rendered as HTML' })),
  }),
  create: defineParams({
    id: projectId,
    title: P.name({ description: 'title of the page (`dir/title` puts it in a directory)', maxLength: 4096 }),
    content: P.string({ description: 'content of the page' }),
    format,
  }),
  update: defineParams({
    id: projectId, slug,
    title: P.optional(P.name({ description: 'new title of the page', maxLength: 4096 })),
    content: P.optional(P.string({ description: 'new content of the page' })),
    format,
  }),
  remove: defineParams({ id: projectId, slug }),
  // The multipart `file` and `branch` are read by the handler (multipart: 'stream'), bounded by max_attachment_size.
  attachment: defineParams({ id: projectId }),
};

const tags = ['wikis'];

const wikis: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const renderer = createMarkdownRenderer();
  app.addHook('onClose', () => renderer.close());
  const ownHost = new URL(config.externalUrl).host;

  /** The wiki's repository when it exists (reads of a wiki never written find no page). */
  async function readableGitDir(ctx: ProjectContext): Promise<string | null> {
    const { gitDir } = wikiRepository(config.storages, ctx.project);
    return (await repositoryExists(gitDir)) ? gitDir : null;
  }

  /** The wiki's repository for a write, created when it is the first. */
  async function writable(ctx: ProjectContext) {
    if (ctx.project.read_only === 1 || !(await ensureWikiRepository(config.storages, ctx.project))) throw repositoryReadOnly();
    return wikiRepository(config.storages, ctx.project);
  }

  function authorOf(user: UserRow): WikiAuthor {
    return { name: user.name, email: user.commit_email || user.email, username: user.username };
  }

  /** The page the path names, or `404 Wiki Page Not Found` (the Service's wiki_page helper). */
  async function pageOr404(ctx: ProjectContext, slugValue: string, version?: string): Promise<WikiPage> {
    const gitDir = await readableGitDir(ctx);
    const page = gitDir ? await findPage(gitDir, slugValue, version) : null;
    if (!page) throw notFound('Wiki Page');
    return page;
  }

  /**
   * render_wiki_content: Markdown through kiln's renderer (the Service's full pipeline). kiln has
   * no RDoc, AsciiDoc or Org engine: those pages are shown as their text, escaped, the way the
   * Service shows markup it cannot render (MarkupHelper's plain fallback).
   */
  async function renderPage(page: WikiPage): Promise<string> {
    const { text } = pageText(page);
    if (page.format === 'markdown') return renderer.render(text, { gfm: true, ownHost });
    const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    return `<pre class="plain-readme">${escaped}</pre>`;
  }

  function written(result: WikiWriteResult): WikiPage {
    if (result.ok) return result.page;
    if (result.reason === 'read_only') throw repositoryReadOnly();
    throw validationFailed(result.errors);
  }

  async function maxContentBytes(): Promise<number> {
    return (await currentSettings(db)).wiki_page_max_content_bytes;
  }

  async function load(request: FastifyRequest, id: string, action: 'read_wiki' | 'create_wiki' | 'admin_wiki') {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, action);
    return ctx;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/wikis', auth: 'optional', params: params.list,
    schema: { summary: "A project's wiki pages", tags, response: { 200: Type.Array(Type.Union([WikiPageSchema, WikiPageBasicSchema])) } },
  }, async ({ request, input }) => {
    const ctx = await load(request, input.id, 'read_wiki');
    const gitDir = await readableGitDir(ctx);
    const pages = gitDir ? await listPages(gitDir, input.with_content) : [];
    return pages.map((p) => (input.with_content ? presentWikiPage(p) : presentWikiPageBasic(p)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/wikis/:slug', auth: 'optional', params: params.one,
    schema: { summary: 'A wiki page', tags, response: { 200: WikiPageSchema } },
  }, async ({ request, input }) => {
    const ctx = await load(request, input.id, 'read_wiki');
    const page = await pageOr404(ctx, input.slug, input.version);
    return presentWikiPage(page, input.render_html ? await renderPage(page) : undefined);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/wikis', auth: 'required', scopes: ['api'], params: params.create,
    schema: { summary: 'Creates a wiki page', tags, response: { 201: WikiPageSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await load(request, input.id, 'create_wiki');
    const repo = await writable(ctx);
    const page = written(await createPage(db, repo, {
      title: input.title, content: input.content, format: input.format, author: authorOf(caller.user),
      maxContentBytes: await maxContentBytes(),
    }));
    await queueWikiPageHook(db, config, ctx.project, page, caller.user.id, 'create');
    reply.code(201);
    return presentWikiPage(page);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/wikis/:slug', auth: 'required', scopes: ['api'], params: params.update,
    schema: { summary: 'Updates a wiki page', tags, response: { 200: WikiPageSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await load(request, input.id, 'create_wiki');
    const page = await pageOr404(ctx, input.slug);
    const repo = await writable(ctx);
    // `format` is markdown unless given, as the Service's declared default makes it.
    const updated = written(await updatePage(db, repo, page, {
      ...(input.title !== undefined ? { title: input.title } : {}), ...(input.content !== undefined ? { content: input.content } : {}),
      format: input.format, author: authorOf(caller.user), maxContentBytes: await maxContentBytes(),
    }));
    await queueWikiPageHook(db, config, ctx.project, updated, caller.user.id, 'update');
    return presentWikiPage(updated);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/wikis/:slug', auth: 'required', scopes: ['api'], params: params.remove,
    schema: { summary: 'Deletes a wiki page', tags },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await load(request, input.id, 'admin_wiki');
    const page = await pageOr404(ctx, input.slug);
    const repo = await writable(ctx);
    written(await deletePage(db, repo, page, authorOf(caller.user)));
    await queueWikiPageHook(db, config, ctx.project, page, caller.user.id, 'delete');
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/projects/:id/wikis/attachments', auth: 'required', scopes: ['api'], params: params.attachment,
    multipart: 'stream',
    schema: {
      summary: 'Commits an attachment to the wiki repository (multipart `file`, optional `branch`)', tags,
      response: { 201: WikiAttachmentSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await load(request, input.id, 'create_wiki');
    // The same bound as any Markdown attachment (the instance's max_attachment_size, in MiB): 413 past it.
    const limit = (await currentSettings(db)).max_attachment_size * 1024 * 1024;
    let file: UploadedFile | null = null;
    let branch: string | undefined;
    if (isMultipart(request)) {
      for await (const part of multipartParts(request.raw, request.headers, { fileSize: limit, files: 5, fields: 50 })) {
        if (part.type === 'field') {
          if (part.fieldname === 'branch') branch = part.value;
          continue;
        }
        if (part.fieldname !== 'file' || file) {
          part.file.resume();
          continue;
        }
        file = { filename: part.filename, mimetype: part.mimetype, data: await bufferFile(part.file) };
      }
    }
    if (!file) throw missingAttribute('file');
    // A branch name is a ref name: bounded and NUL-free before git sees it (issue 13).
    if (branch !== undefined && (branch.length > 255 || !isStorableText(branch))) throw invalidParams(['branch is invalid']);
    const repo = await writable(ctx);
    const result = await createAttachment(db, repo, {
      fileName: file.filename, data: file.data, ...(branch !== undefined && branch !== '' ? { branch } : {}), author: authorOf(caller.user),
    });
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw badRequestMessage(result.message);
    }
    reply.code(201);
    return presentWikiAttachment(result);
  });
};

export default wikis;
