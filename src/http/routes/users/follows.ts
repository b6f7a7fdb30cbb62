/**
 * Following users (spec: Users table rows follow/unfollow, followers/following; reference §1.2,
 * §11). Follow and unfollow answer 201 with the followed user's UserBasic, or 304 with an empty
 * body when nothing changes (already followed, not followed, or oneself).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Caller } from '../../context.ts';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { follow, followersQuery, followingQuery, MAX_FOLLOWEE_LIMIT, unfollow } from '../../../domain/follows/follows.queries.ts';
import { ApiError, forbidden, notFound } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { presentUserBasic, UserBasicSchema } from '../../entities/user.ts';
import { route } from '../../route.ts';

const idParams = defineParams({ id: P.integer({ description: 'user id' }) });
const listParams = defineParams({ id: P.integer({ description: 'user id' }), ...paginationParams });

const notModified = () => new ApiError(304, null);

const userFollows: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const present = (user: UserRow) => presentUserBasic(user, {}, { externalUrl: config.externalUrl, canReadProfile: true });

  async function target(id: number): Promise<UserRow> {
    const user = await findUserById(db, id);
    if (!user) throw notFound('User');
    return user;
  }

  /** The Service lists a user's follows only to signed-in viewers who may read the profile. */
  async function listedUser(caller: Caller | null, id: number): Promise<UserRow> {
    const viewer = caller?.user;
    if (!viewer) throw forbidden('Not authorized!');
    const user = await target(id);
    if (user.private_profile === 1 && viewer.admin !== 1 && viewer.id !== user.id) throw notFound('User');
    return user;
  }

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/follow', auth: 'required', params: idParams,
    schema: { summary: 'Follow a user (304 when already followed)', tags: ['users'], response: { 201: UserBasicSchema } },
  }, async ({ reply, input, caller }) => {
    const user = await target(input.id);
    const outcome = await follow(db, caller.user.id, user.id);
    if (outcome === 'unchanged') throw notModified();
    if (outcome === 'limit_reached') {
      // The follow model's validation message, rendered as a plain string (reference §11).
      throw new ApiError(400, {
        message: `You can't follow more than ${MAX_FOLLOWEE_LIMIT} users. To follow more users, unfollow some others.`,
      });
    }
    reply.code(201);
    return present(user);
  });

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/unfollow', auth: 'required', params: idParams,
    schema: { summary: 'Unfollow a user (304 when not followed)', tags: ['users'], response: { 201: UserBasicSchema } },
  }, async ({ reply, input, caller }) => {
    const user = await target(input.id);
    if (!(await unfollow(db, caller.user.id, user.id))) throw notModified();
    reply.code(201);
    return present(user);
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/followers', auth: 'optional', scopes: ['read_user'], params: listParams,
    schema: { summary: "A user's followers", tags: ['users'], response: { 200: Type.Array(UserBasicSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const user = await listedUser(caller, input.id);
    return (await paginate(db, request, reply, followersQuery(db, user.id))).map(present);
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/following', auth: 'optional', scopes: ['read_user'], params: listParams,
    schema: { summary: 'The users a user follows', tags: ['users'], response: { 200: Type.Array(UserBasicSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const user = await listedUser(caller, input.id);
    return (await paginate(db, request, reply, followingQuery(db, user.id))).map(present);
  });
};

export default userFollows;
