/**
 * The route table: every area kiln serves under /api/v4, read top to bottom. Each area is a
 * folder whose index.ts registers its files, one plugin per resource; `npm run routes` prints
 * every path with its guard (auth mode, scopes, job token), `npm run routes -- ci` one area's.
 */
import type { FastifyInstance } from 'fastify';
import { health, version } from './meta/meta.ts';
import apiV3 from './meta/api-v3.ts';
import templates from './meta/templates.ts';
import { registerFiles } from './area.ts';
import avatars from './users/avatars.ts';
import uploadFiles from './projects/upload-files.ts';
import badgeImages from './projects/badge-images.ts';
import users from './users/index.ts';
import projects from './projects/index.ts';
import groups from './groups/index.ts';
import repository from './repository/index.ts';
import ci from './ci/index.ts';
import runners from './runners/index.ts';
import admin from './admin/index.ts';
import storage from './storage/index.ts';
import issues from './issues/index.ts';
import discussions from './discussions/index.ts';
import activity from './activity/index.ts';
import mergeRequests from './merge-requests/index.ts';
import packages from './packages/index.ts';

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  await registerFiles(app, 'meta', { 'meta': health });       // /-/liveness, /-/readiness
  await registerFiles(app, 'users', { 'avatars': avatars });  // /uploads/-/system/user/avatar/:id/:filename
  await registerFiles(app, 'projects', { 'upload-files': uploadFiles }); // /<namespace…>/<project>/uploads/:secret/:filename
  await registerFiles(app, 'projects', { 'badge-images': badgeImages }); // /<namespace…>/<project>/badges/<ref>/(pipeline|coverage).svg
  await app.register(async (api) => {
    // /version; /templates/(gitignores|gitlab_ci_ymls|dockerfiles|licenses)[/:name]
    await registerFiles(api, 'meta', { 'meta': version, 'templates': templates });
    await api.register(users);
    await api.register(projects);
    await api.register(groups);
    await api.register(repository);
    await api.register(ci);
    await api.register(runners);
    await api.register(admin);
    await api.register(storage);
    await api.register(issues);
    await api.register(discussions);
    await api.register(activity);
    await api.register(mergeRequests);
    await api.register(packages);
  }, { prefix: '/api/v4' });
  await app.register(apiV3, { prefix: '/api/v3' });
}
