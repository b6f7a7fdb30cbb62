/**
 * The route table: every resource kiln serves, in one place, read top to bottom. Each area is one
 * Fastify plugin; its file lists its routes with their guards.
 */
import type { FastifyInstance } from 'fastify';
import { health, version } from './meta.ts';
import apiV3 from './api-v3.ts';
import users from './users.ts';
import personalAccessTokens from './personal-access-tokens.ts';
import userTokens from './user-tokens.ts';
import userGpgKeys from './user-gpg-keys.ts';
import userAccounts from './user-accounts.ts';
import userAdminActions from './user-admin-actions.ts';
import userCustomAttributes from './user-custom-attributes.ts';
import userAvatars from './user-avatars.ts';
import userEmails from './user-emails.ts';
import userStatus from './user-status.ts';
import userPreferences from './user-preferences.ts';
import userFollows from './user-follows.ts';
import userCounts from './user-counts.ts';
import userActivities from './user-activities.ts';
import userKeys from './user-keys.ts';
import keys from './keys.ts';
import applications from './applications.ts';
import projects from './projects.ts';
import groups from './groups.ts';
import members from './members.ts';
import memberships from './memberships.ts';
import snippets from './snippets.ts';
import storageMoves from './storage-moves.ts';
import applicationSettings from './application-settings.ts';
import pipelines from './pipelines.ts';
import jobs from './jobs.ts';
import jobActions from './job-actions.ts';
import jobToken from './job-token.ts';
import runners from './runners.ts';
import runnerProtocol from './runner-protocol.ts';
import runnerFiles from './runner-files.ts';

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  await app.register(health);
  await app.register(userAvatars);
  await app.register(async (api) => {
    await api.register(version);
    await api.register(users);
    await api.register(personalAccessTokens);
    await api.register(userTokens);
    await api.register(userAccounts);
    await api.register(userAdminActions);
    await api.register(userCustomAttributes);
    await api.register(userGpgKeys);
    await api.register(userEmails);
    await api.register(userStatus);
    await api.register(userPreferences);
    await api.register(userFollows);
    await api.register(userCounts);
    await api.register(userActivities);
    await api.register(userKeys);
    await api.register(keys);
    await api.register(applications);
    await api.register(projects);
    await api.register(groups);
    await api.register(members);
    await api.register(memberships);
    await api.register(snippets);
    await api.register(storageMoves);
    await api.register(applicationSettings);
    await api.register(pipelines);
    await api.register(jobs);
    await api.register(jobActions);
    await api.register(jobToken);
    await api.register(runners);
    await api.register(runnerProtocol);
    await api.register(runnerFiles);
  }, { prefix: '/api/v4' });
  await app.register(apiV3, { prefix: '/api/v3' });
}
