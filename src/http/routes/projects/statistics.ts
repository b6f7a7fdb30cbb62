/**
 * A project's fetch statistics and its housekeeping (the Service's lib/api/project_statistics.rb
 * and POST /projects/:id/housekeeping of lib/api/projects.rb).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { LEASE_TAKEN, startHousekeeping } from '../../../domain/housekeeping/housekeeping.ts';
import { fetchStatistics } from '../../../domain/statistics/project-statistics.ts';
import { conflict } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const idParams = defineParams({ id: P.string({ description: 'project id or URL-encoded full path' }) });

const ProjectDailyStatisticsSchema = Type.Object({
  fetches: Type.Object({
    total: Type.Integer(),
    days: Type.Array(Type.Object({ count: Type.Integer(), date: Type.String() })),
  }),
}, { title: 'ProjectDailyStatistics' });

const projectStatistics: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/projects/:id/statistics', auth: 'required', params: idParams,
    schema: {
      summary: "A project's git fetches per day over the last 30 days (Reporters and above)", tags: ['projects'],
      response: { 200: ProjectDailyStatisticsSchema },
    },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    // authorize! :daily_statistics (Reporter).
    authorizeProject(ctx, 'read_statistics');
    return fetchStatistics(db, ctx.project.id);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/housekeeping', auth: 'required', params: idParams,
    schema: {
      summary: "Start housekeeping (git gc) of a project's repository (Maintainers)", tags: ['projects'],
      response: { 201: Type.String() },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const jobId = await startHousekeeping(db, ctx.project.id);
    // HousekeepingService::LeaseTaken → conflict!.
    if (jobId === null) throw conflict(LEASE_TAKEN);
    app.jobs.wake();
    // The Service answers the queued worker's job id.
    return reply.code(201).type('application/json').send(JSON.stringify(String(jobId)));
  });
};

export default projectStatistics;
