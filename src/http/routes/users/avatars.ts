/**
 * Serves uploaded user avatars at the path the user entities' avatar_url names
 * (`/uploads/-/system/user/avatar/:id/:filename`), outside the API prefix and without
 * authentication, as the Service serves public avatar uploads.
 */
import type { FastifyPluginAsync } from 'fastify';
import { readAvatar } from '../../../domain/users/avatar.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { notFound } from '../../errors.ts';

const userAvatars: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  app.get<{ Params: { id: string; filename: string } }>('/uploads/-/system/user/avatar/:id(^\\d+$)/:filename', {
    config: { web: true },
    schema: { summary: "A user's avatar image", tags: ['users'], hide: true },
  }, async (request, reply) => {
    const id = Number(request.params.id);
    const user = isStorableId(id) ? await findUserById(db, id) : undefined;
    // Only the current avatar is served; a replaced file name is gone.
    if (!user || user.avatar !== request.params.filename) throw notFound();
    const file = await readAvatar(config.dataDir, id, request.params.filename);
    if (!file) throw notFound();
    return reply.type(file.contentType).header('cache-control', 'public, max-age=300').send(file.data);
  });
};

export default userAvatars;
