/**
 * Runners: their API for users and administrators, and the protocol runners speak (spec, Runners).
 *
 * Every path of the area and its guard: `npm run routes -- runners`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import projectRunners from './project-runners.ts';
import groupRunners from './group-runners.ts';
import runners from './runners.ts';
import protocol from './protocol.ts';
import files from './files.ts';

export default async function runnersArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'runners', {
    'project-runners': projectRunners, // /projects/:id/runners, /projects/:id/runners/reset_registration_token
    'group-runners': groupRunners,     // /groups/:id/runners, /groups/:id/runners/reset_registration_token
    'runners': runners,                // /runners, /runners/all, /runners/:id[/jobs]
    'protocol': protocol,              // /runners (register, delete), /runners/verify, /jobs/request, /jobs/:id
    'files': files,                    // /jobs/:id/(trace|artifacts)
  });
}
