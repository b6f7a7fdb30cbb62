/**
 * The languages of a project's repository (the Service 15.2's GET /projects/:id/languages,
 * lib/api/projects.rb): `{ name: percentage }`, largest first, for whoever may see the project
 * (the Service checks nothing more); an empty repository has none.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { repositoryLanguages } from '../../../domain/repositories/languages.ts';
import { resolveCommit } from '../../../domain/repositories/git-read.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const languageParams = defineParams({ id: P.string() });

const languages: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/projects/:id/languages', auth: 'optional', params: languageParams,
    schema: {
      summary: "The languages of the repository's default branch, in percent", tags: ['projects'],
      response: { 200: Type.Record(Type.String(), Type.Number()) },
    },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const repo = projectRepository(request.server.kiln.config.storages, ctx.project);
    const ref = ctx.project.default_branch ? `refs/heads/${ctx.project.default_branch}` : 'HEAD';
    const commit = await resolveCommit(repo.gitDir, ref).catch(() => null);
    if (!commit) return {};
    return Object.fromEntries((await repositoryLanguages(repo.gitDir, commit)).map((l) => [l.name, l.share]));
  });
};

export default languages;
