/**
 * The administrator's operations on a user's state (spec, User operations and their guards;
 * reference §0.3, §1.7): block, unblock, deactivate, activate, ban, unban (201 with a bare JSON
 * literal), approve (201) and reject (200) with a message, DELETE /users/:id (204) and
 * PATCH /users/:id/disable_two_factor (204). Every change drops the user's cached credentials so
 * it applies to their next request.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { deleteUser, type LeftoverRepository } from '../../../domain/users/delete-user.ts';
import { approveUser, DECIDE, fireUserEvent, NOT_PENDING_APPROVAL, type StateOperation } from '../../../domain/users/state-operations.ts';
import { setTwoFactorRequired } from '../../../domain/users/users.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { badRequest, conflict, forbidden, forbiddenMessage } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { auditUser } from '../../audit.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const idParams = defineParams({ id: P.integer({ description: 'user id' }) });
const deleteParams = defineParams({
  id: P.integer({ description: 'user id' }),
  hard_delete: P.optional(P.boolean({
    description: 'delete contributions and solely owned groups instead of moving them to the ghost user',
  })),
});

const Literal = Type.Union([Type.Boolean(), Type.Null()]);
const Message = Type.Object({ message: Type.String() });

/** A bare `true` / `false` / `null` body (CONTRIBUTING, HTTP). */
function sendLiteral(reply: FastifyReply, value: boolean | null): FastifyReply {
  return reply.code(201).type('application/json').send(JSON.stringify(value));
}

/** The user is gone either way; a repository that could not be removed is an operator's matter. */
function logLeftovers(request: FastifyRequest, leftovers: LeftoverRepository[]): void {
  for (const { storage, diskPath, error } of leftovers) {
    request.log.error({ err: error, storage, diskPath }, 'repository of a deleted user left on disk');
  }
}

const STATE_OPERATIONS: { path: string; operation: StateOperation; summary: string }[] = [
  { path: 'block', operation: 'block', summary: 'Block a user' },
  { path: 'unblock', operation: 'unblock', summary: 'Unblock a user (LDAP-blocked and deactivated users excepted)' },
  { path: 'deactivate', operation: 'deactivate', summary: 'Deactivate a user without activity in the past 90 days' },
  { path: 'activate', operation: 'activate', summary: 'Activate a deactivated user' },
  { path: 'ban', operation: 'ban', summary: 'Ban an active user' },
  { path: 'unban', operation: 'unban', summary: 'Unban a banned user' },
];

/** What each operation did, as its audit event says it. */
const DONE: Record<StateOperation, string> = {
  block: 'Blocked', unblock: 'Unblocked', deactivate: 'Deactivated', activate: 'Activated', ban: 'Banned', unban: 'Unbanned',
};

const userAdminActions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const host = new URL(config.externalUrl).hostname;

  for (const { path, operation, summary } of STATE_OPERATIONS) {
    route(app, {
      method: 'POST', url: `/users/:id(^\\d+$)/${path}`, auth: 'required', params: idParams,
      schema: { summary: `${summary} (administrators)`, tags: ['users'], response: { 201: Literal } },
    }, async ({ request, reply, input }) => {
      authenticatedAsAdmin(request);
      const user = await userOr404(db, input.id);
      const decision = DECIDE[operation](user, new Date());
      if (decision.kind === 'refuse') throw decision.prefixed ? forbidden(decision.message) : forbiddenMessage(decision.message);
      if (decision.event === null) return sendLiteral(reply, decision.body);
      const changed = await fireUserEvent(db, user, decision.event);
      if (changed) {
        await auditUser(request, user, `${DONE[operation]} user ${user.username}`);
      }
      return sendLiteral(reply, decision.body === true ? changed : decision.body);
    });
  }

  /**
   * approve and reject check the caller's permission in their services, after finding the user,
   * and answer with the service's message (no "403 Forbidden - " prefix) (reference §0.3).
   */
  async function pendingUser(caller: Caller, id: number, notAllowed: string): Promise<UserRow> {
    const user = await userOr404(db, id);
    if (caller.user.admin !== 1) throw forbiddenMessage(notAllowed);
    return user;
  }

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/approve', auth: 'required', params: idParams,
    schema: { summary: 'Approve a user pending approval (administrators)', tags: ['users'], response: { 201: Message } },
  }, async ({ request, reply, input, caller }) => {
    const user = await pendingUser(caller, input.id, 'You are not allowed to approve a user');
    // The spec's guard table is explicit that a user blocked by an administrator or by LDAP is
    // refused with 403, and a deactivated (or otherwise not pending) user with 409; the text is
    // the Service's one message for a user who is not pending approval (reference §0.3).
    const refused = await approveUser(db, user);
    if (refused !== null) throw refused === 403 ? forbiddenMessage(NOT_PENDING_APPROVAL) : conflict(NOT_PENDING_APPROVAL);
    await auditUser(request, user, `Approved user ${user.username}`);
    return reply.code(201).send({ message: 'Success' });
  });

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/reject', auth: 'required', params: idParams,
    schema: { summary: 'Reject (delete) a user pending approval (administrators)', tags: ['users'], response: { 200: Message } },
  }, async ({ request, reply, input, caller }) => {
    const user = await pendingUser(caller, input.id, 'You are not allowed to reject a user');
    if (user.state !== 'blocked_pending_approval') throw conflict('User does not have a pending request');
    // A rejected sign-up is removed outright, contributions included (Users::RejectService).
    const result = await deleteUser(db, user, { hardDelete: true, host, dataDir: config.dataDir, shards: config.storages });
    if (!result.ok) throw result.reason === 'conflict' ? conflict(result.message) : forbidden();
    logLeftovers(request, result.leftovers);
    await auditUser(request, user, `Rejected user ${user.username}`);
    return reply.code(200).send({ message: 'Success' });
  });

  route(app, {
    method: 'DELETE', url: '/users/:id(^\\d+$)', auth: 'required', params: deleteParams,
    schema: { summary: 'Delete a user (administrators)', tags: ['users'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input, caller }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    checkUnmodifiedSince(request, user.updated_at);
    const result = await deleteUser(db, user, {
      hardDelete: input.hard_delete === true,
      host,
      dataDir: config.dataDir,
      shards: config.storages,
      actorId: caller.user.id,
    });
    if (!result.ok) throw result.reason === 'conflict' ? conflict(result.message) : forbidden();
    logLeftovers(request, result.leftovers);
    await auditUser(request, user, `Removed user ${user.username}`);
    return reply.code(204).send();
  });

  route(app, {
    method: 'PATCH', url: '/users/:id(^\\d+$)/disable_two_factor', auth: 'required', params: idParams,
    schema: { summary: "Disable a user's two-factor authentication (administrators)", tags: ['users'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    if (user.admin === 1) throw forbidden('Two-factor authentication for admins cannot be disabled via the API. Use the Rails console');
    if (user.otp_required_for_login !== 1) throw badRequest('Two-factor authentication is not enabled for this user');
    await setTwoFactorRequired(db, user.id, false);
    return reply.code(204).send();
  });
};

export default userAdminActions;
