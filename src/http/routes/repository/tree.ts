/**
 * The tree of a project's repository (the Service's GET /projects/:id/repository/tree): the
 * entries of a directory at a ref, or of its whole subtree with `recursive`, directories first,
 * then files, then submodules (the Service's Tree#sorted_entries), paged by offset.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { entryAt, listTree, resolveCommit, type TreeEntry } from '../../../domain/repositories/git-read.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams, perPageOf, setNextLink } from '../../lists/pagination.ts';
import { TreeObjectSchema } from '../../entities/repository-tree.ts';
import { loadRepository } from '../../loaders/repository.ts';
import { route } from '../../route.ts';

const treeParams = defineParams({
  id: P.string(),
  path: P.optional(P.string({ description: 'a directory; the root when absent' })),
  ref: P.optional(P.string({ description: 'default: the default branch' })),
  recursive: P.optional(P.boolean({ default: false })),
  pagination: P.optional(P.oneOf(['offset', 'keyset'] as const, { default: 'offset' })),
  page_token: P.optional(P.string({ description: 'keyset: the id of the last entry of the previous page' })),
  ...paginationParams,
});

const ORDER: Record<TreeEntry['type'], number> = { tree: 0, blob: 1, commit: 2 };

const tree: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/projects/:id/repository/tree', auth: 'optional', params: treeParams,
    schema: { summary: 'Files and directories at a ref', tags: ['repositories'], response: { 200: Type.Array(TreeObjectSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    let path = '';
    if (input.path && input.path.replace(/\//g, '') !== '') {
      const p = normaliseFilePath(input.path);
      if (!p.ok) throw notFound('Tree');
      path = p.path;
    }
    const ref = input.ref || ctx.project.default_branch || 'HEAD';
    const commit = readableRevision(ref) ? await resolveCommit(ctx.repo.gitDir, ref) : null;
    if (!commit) throw notFound('Tree');
    if (path !== '' && (await entryAt(ctx.repo.gitDir, commit, path))?.type !== 'tree') throw notFound('Tree');
    const entries = (await listTree(ctx.repo.gitDir, commit, path, input.recursive))
      .map((e, i) => ({ e, i }))
      .sort((a, b) => ORDER[a.e.type] - ORDER[b.e.type] || a.i - b.i)
      .map(({ e }) => ({ id: e.id, name: e.name, type: e.type, path: e.path, mode: e.mode }));
    if (input.pagination === 'keyset') {
      // Keyset pages (the Service's tree `page_token`): start after the entry with that id.
      let start = 0;
      if (input.page_token) {
        const at = entries.findIndex((e) => e.id === input.page_token);
        if (at === -1) throw invalidParams(['page_token is invalid']);
        start = at + 1;
      }
      const perPage = perPageOf(input);
      const page = entries.slice(start, start + perPage);
      if (start + perPage < entries.length) setNextLink(request, reply, { page_token: page[page.length - 1].id, per_page: perPage });
      return page;
    }
    return paginateArray(request, reply, entries);
  });
};

export default tree;
