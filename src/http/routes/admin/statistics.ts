/**
 * Instance statistics for administrators (the Service's lib/api/statistics.rb and
 * ApplicationStatistics entity): every count a string with thousands delimiters
 * (number_with_delimiter: "1,234").
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { applicationCounts, type ApplicationCounts } from '../../../domain/statistics/application-statistics.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { route } from '../../route.ts';

const FIELDS = [
  'forks', 'issues', 'merge_requests', 'notes', 'snippets', 'ssh_keys', 'milestones', 'users', 'projects', 'groups', 'active_users',
] as const satisfies readonly (keyof ApplicationCounts)[];

const ApplicationStatisticsSchema = Type.Object(
  Object.fromEntries(FIELDS.map((f) => [f, Type.String()])) as Record<(typeof FIELDS)[number], ReturnType<typeof Type.String>>,
  { title: 'ApplicationStatistics' },
);

/** number_with_delimiter: groups of three digits joined by commas. */
export function withDelimiters(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const statistics: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/application/statistics', auth: 'required',
    preValidation: async (request: FastifyRequest) => {
      // `before { authenticated_as_admin! }`.
      authenticatedAsAdmin(request);
    },
    schema: { summary: 'Counts of the instance (administrators)', tags: ['statistics'], response: { 200: ApplicationStatisticsSchema } },
  }, async () => {
    const counts = await applicationCounts(db);
    return Object.fromEntries(FIELDS.map((f) => [f, withDelimiters(counts[f])]));
  });
};

export default statistics;
