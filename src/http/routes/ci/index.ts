/**
 * CI of projects: pipelines, jobs, artifacts, job tokens, lint, variables, triggers, pipeline schedules,
 * environments, deployments (spec, Jobs and Pipelines).
 *
 * Every path of the area and its guard: `npm run routes -- ci`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import pipelines from './pipelines.ts';
import lint from './lint.ts';
import jobs from './jobs.ts';
import jobActions from './job-actions.ts';
import jobArtifacts from './job-artifacts.ts';
import jobToken from './job-token.ts';
import variables from './variables.ts';
import pipelineActions from './pipeline-actions.ts';
import triggers from './triggers.ts';
import pipelineSchedules from './pipeline-schedules.ts';
import environments from './environments.ts';
import deployments from './deployments.ts';

export default async function ciArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'ci', {
    'pipelines': pipelines,            // /projects/:id/pipeline, /projects/:id/pipelines[/:pipeline_id]
    'lint': lint,                      // /projects/:id/ci/lint, /ci/lint
    'jobs': jobs,                      // /projects/:id/jobs[/:job_id[/trace]], /projects/:id/pipelines/:pipeline_id/(jobs|bridges)
    'job-actions': jobActions,         // /projects/:id/jobs/:job_id/(cancel|retry|erase|play)
    'job-artifacts': jobArtifacts,     // /projects/:id/jobs/:job_id/artifacts, /projects/:id/jobs/artifacts/:ref_name,
                                       // /projects/:id/artifacts
    'job-token': jobToken,             // /job, /job/allowed_agents
    'variables': variables,            // /projects/:id/variables, /groups/:id/variables, /admin/ci/variables
    'pipeline-actions': pipelineActions, // /projects/:id/pipelines/:pipeline_id/(retry|cancel|variables), DELETE,
                                         // /projects/:id/pipelines/latest
    'triggers': triggers,              // /projects/:id/triggers, /projects/:id/trigger/pipeline, /projects/:id/ref/:ref/trigger/pipeline
    'pipeline-schedules': pipelineSchedules, // /projects/:id/pipeline_schedules[/:pipeline_schedule_id
                                             //   [/(take_ownership|play|pipelines|variables[/:key])]]
    'environments': environments,      // /projects/:id/environments[/:environment_id[/stop]], …/stop_stale, …/review_apps
    'deployments': deployments,        // /projects/:id/deployments[/:deployment_id[/merge_requests]]
  });
}
