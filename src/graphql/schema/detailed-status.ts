/**
 * `detailedStatus` of pipelines and jobs: the Service's Gitlab::Ci::Status presenters reduced to
 * kiln's states (text, label, icon, group, tooltip, favicon and the details path).
 */
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import type { GqlContext } from '../context.ts';
import { projectPath } from './ci.ts';

export const typeDefs = /* GraphQL */ `
  type DetailedStatus {
    id: String!
    group: String
    icon: String
    label: String
    text: String
    tooltip: String
    favicon: String
    hasDetails: Boolean
    detailsPath: String
  }

  extend type Pipeline { detailedStatus: DetailedStatus! }
  extend type CiJob { detailedStatus: DetailedStatus }
`;

/** status → [text, label, icon] as the Service's status classes word them. */
const WORDS: Record<string, [string, string, string]> = {
  created: ['created', 'created', 'status_created'],
  waiting_for_resource: ['waiting', 'waiting for resource', 'status_pending'],
  preparing: ['preparing', 'preparing', 'status_preparing'],
  pending: ['pending', 'pending', 'status_pending'],
  running: ['running', 'running', 'status_running'],
  success: ['passed', 'passed', 'status_success'],
  failed: ['failed', 'failed', 'status_failed'],
  canceled: ['canceled', 'canceled', 'status_canceled'],
  skipped: ['skipped', 'skipped', 'status_skipped'],
  // A pipeline waiting on a manual job is "blocked" (as REST's detailed_status); a job, below.
  manual: ['blocked', 'waiting for manual action', 'status_manual'],
  scheduled: ['scheduled', 'scheduled', 'status_scheduled'],
};

function present(status: string, id: number, detailsPath: string) {
  const [text, label, icon] = WORDS[status] ?? [status, status, `status_${status}`];
  return {
    id: `${status}-${id}-${id}`,
    group: status === 'waiting_for_resource' ? 'waiting-for-resource' : status,
    icon, label, text, tooltip: label,
    favicon: `/assets/ci_favicons/favicon_${icon}.png`,
    hasDetails: true,
    detailsPath,
  };
}

export const resolvers = {
  Pipeline: {
    detailedStatus: async (p: PipelineRow, _: unknown, ctx: GqlContext) => present(
      p.status, p.id, `${(await projectPath(ctx, p.project_id)) ?? ''}/-/pipelines/${p.id}`,
    ),
  },
  CiJob: {
    detailedStatus: async (j: BuildRow, _: unknown, ctx: GqlContext) => {
      const s = present(j.status, j.id, `${(await projectPath(ctx, j.project_id)) ?? ''}/-/jobs/${j.id}`);
      if (j.status === 'manual') return { ...s, text: 'manual', label: 'manual play action', tooltip: 'manual play action' };
      // A failure allowed to fail shows as passed with a warning in the Service.
      if (j.status === 'failed' && j.allow_failure === 1) {
        return {
          ...s, group: 'success-with-warnings', label: 'failed (allowed to fail)',
          tooltip: 'failed - (allowed to fail)', icon: 'status_warning',
          favicon: '/assets/ci_favicons/favicon_status_warning.png', text: 'warning',
        };
      }
      return s;
    },
  },
};
