/**
 * Issue counts by state (GET /issues_statistics, /groups/:id/issues_statistics,
 * /projects/:id/issues_statistics of the Service 15.2): the lists' filters, the same visibility
 * and confidentiality rules, `{statistics: {counts: {all, closed, opened}}}`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import {
  countIssuesByState, filterIssues, issuesQuery, issuesShape, type IssueContainer, type IssueFilters,
} from '../../../domain/issues/issues.finder.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { checkSearchRateLimit } from '../../search-rate-limit.ts';
import { unauthorized } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { route } from '../../route.ts';
import { issueFilterParams, issueFilters, nonArchivedParam, projectContainer } from './issue-list-params.ts';
import { groupAndDescendants } from './issue-lists.ts';

const StatisticsSchema = Type.Object({
  statistics: Type.Object({ counts: Type.Object({ all: Type.Integer(), closed: Type.Integer(), opened: Type.Integer() }) }),
}, { title: 'IssuesStatistics' });

const projectParams = defineParams({ id: P.string(), ...issueFilterParams });
const groupParams = defineParams({ id: P.string(), ...issueFilterParams, ...nonArchivedParam });
const instanceParams = defineParams({ ...issueFilterParams, ...nonArchivedParam });

const issueStatistics: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function statistics(request: FastifyRequest, viewer: UserRow | null, container: IssueContainer, f: IssueFilters) {
    if (f.search) await checkSearchRateLimit(request);
    const shape = await issuesShape(db, viewer, container, f.nonArchived ?? true, { inline: true });
    const qb = issuesQuery(db, filterIssues(shape, f, viewer));
    const { opened, closed } = await countIssuesByState(db, qb);
    return { statistics: { counts: { all: opened + closed, closed, opened } } };
  }

  route(app, {
    method: 'GET', url: '/issues_statistics', auth: 'optional', params: instanceParams,
    schema: { summary: 'Counts of the issues the caller may see', tags: ['issues'], response: { 200: StatisticsSchema } },
  }, async ({ request, input }) => {
    if (!request.caller && input.scope !== 'all') throw unauthorized();
    const viewer = request.caller?.user ?? null;
    return statistics(request, viewer, { instance: true }, issueFilters(input, 'created_by_me'));
  });

  route(app, {
    method: 'GET', url: '/groups/:id/issues_statistics', auth: 'optional', params: groupParams,
    schema: { summary: "Counts of a group's issues", tags: ['issues'], response: { 200: StatisticsSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadGroup(request, input.id);
    const container = { namespaceIds: await groupAndDescendants(request, ctx.group.id) };
    return statistics(request, request.caller?.user ?? null, container, issueFilters(input, 'all'));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues_statistics', auth: 'optional', params: projectParams,
    schema: { summary: "Counts of a project's issues", tags: ['issues'], response: { 200: StatisticsSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const container = projectContainer(ctx);
    return statistics(request, request.caller?.user ?? null, container, issueFilters(input, 'all'));
  });
};

export default issueStatistics;
