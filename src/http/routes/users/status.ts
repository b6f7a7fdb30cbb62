/**
 * User status (spec: Users table rows /user/status, /users/:id_or_username/status; reference §1.2,
 * §1.9, §11): read anyone's status without authentication, read and set your own.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findUserByIdOrUsername } from '../../../domain/users/users.queries.ts';
import { currentStatus } from '../../../domain/user-status/current-status.ts';
import { CLEAR_STATUS_AFTER_VALUES, setStatus, type StatusParams } from '../../../domain/user-status/set-status.ts';
import { invalidParams, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { rejectSpam } from '../../spam-check.ts';
import { presentUserStatus, UserStatusSchema } from '../../entities/user-status.ts';
import { route, type InputOf } from '../../route.ts';
import type { Caller } from '../../context.ts';

const statusParams = defineParams({
  emoji: P.optional(P.string({ description: 'emoji name; speech_balloon when a message is set without one' })),
  message: P.optional(P.string({ description: 'status message (at most 100 characters, may contain emoji codes)' })),
  availability: P.optional(P.string({ description: 'not_set or busy' })),
  clear_status_after: P.optional(P.oneOf(CLEAR_STATUS_AFTER_VALUES, { description: 'clear the status after this long' })),
});

const userStatusParams = defineParams({
  user_id: P.string({ description: 'id or username of the user' }),
});

const STATUS_FIELDS = ['emoji', 'message', 'availability', 'clear_status_after'] as const;

/** PUT and PATCH: spam check on a new message, then the Service's SetStatusService rules. */
async function writeStatus(
  request: FastifyRequest, reply: FastifyReply, caller: Caller, input: InputOf<typeof statusParams>, mode: 'replace' | 'update',
) {
  const { db } = request.server.kiln;
  const user = caller.user;
  const sent: StatusParams = {};
  for (const k of STATUS_FIELDS) if (Object.hasOwn(input, k)) (sent as Record<string, unknown>)[k] = input[k];
  // PATCH without parameters changes nothing and answers 200 with the body `null` (reference §1.2).
  if (mode === 'update' && Object.keys(sent).length === 0) return sendNull(reply);
  if (sent.message && sent.message.trim() !== '') {
    await rejectSpam(request, { user, text: sent.message, noteableType: 'UserStatus', entityName: 'user status' });
  }
  const result = await setStatus(db, user.id, sent, mode);
  if (!result.ok) {
    if (result.reason === 'invalid_availability') throw invalidParams(['availability does not have a valid value']);
    throw validationFailed(result.errors);
  }
  // A cleared status answers the empty User status (every field null), as a read of it would.
  return presentUserStatus(result.value);
}

function sendNull(reply: FastifyReply) {
  return reply.code(200).type('application/json').send(JSON.stringify(null));
}

const userStatus: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  const writeSchema = {
    tags: ['users'],
    response: { 200: Type.Union([UserStatusSchema, Type.Null()]) }, // null: PATCH without parameters
  };

  route(app, {
    method: 'GET', url: '/user/status', auth: 'required', scopes: ['read_user'],
    schema: { summary: "The current user's status (all fields null without one)", tags: ['users'], response: { 200: UserStatusSchema } },
  }, async ({ caller }) => presentUserStatus(await currentStatus(db, caller.user.id)));

  route(app, {
    method: 'GET', url: '/users/:user_id/status', auth: 'optional', scopes: ['read_user'], params: userStatusParams,
    schema: {
      summary: "A user's status, by id or username; no authentication needed",
      tags: ['users'],
      response: { 200: UserStatusSchema },
    },
  }, async ({ input }) => {
    const user = await findUserByIdOrUsername(db, input.user_id);
    if (!user) throw notFound('User');
    return presentUserStatus(await currentStatus(db, user.id));
  });

  route(app, {
    method: 'PUT', url: '/user/status', auth: 'required', params: statusParams,
    schema: { summary: 'Set the current user\'s status; parameters not sent are cleared', ...writeSchema },
  }, ({ request, reply, input, caller }) => writeStatus(request, reply, caller, input, 'replace'));

  route(app, {
    method: 'PATCH', url: '/user/status', auth: 'required', params: statusParams,
    schema: { summary: 'Change the current user\'s status; parameters not sent are kept', ...writeSchema },
  }, ({ request, reply, input, caller }) => writeStatus(request, reply, caller, input, 'update'));
};

export default userStatus;
