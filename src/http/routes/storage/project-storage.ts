/**
 * Where a project's repository lives, for administrators (the Service's GET /projects/:id/storage
 * and its ProjectRepositoryStorage entity): the repository's path on its shard (without `.git`,
 * as Repository#disk_path), the project id, the shard and when the project was created.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const ProjectRepositoryStorageSchema = Type.Object({
  disk_path: Type.String(), project_id: Type.Integer(), repository_storage: Type.String(), created_at: Type.String(),
}, { title: 'ProjectRepositoryStorage' });

const projectStorage: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/projects/:id/storage', auth: 'required',
    params: defineParams({ id: P.string({ description: 'project id or URL-encoded full path' }) }),
    schema: {
      summary: "Where a project's repository is stored (administrators)", tags: ['projects'],
      response: { 200: ProjectRepositoryStorageSchema },
    },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const { project } = await loadProject(request, input.id);
    return {
      disk_path: project.disk_path.replace(/\.git$/, ''), project_id: project.id,
      repository_storage: project.repository_storage, created_at: project.created_at,
    };
  });
};

export default projectStorage;
