/**
 * Users' secondary emails (spec, Emails; reference §2.3): the current user's under /user/emails,
 * any user's for administrators under /users/:id/emails. The primary email is not listed, as the
 * spec records. Emails added by the user stay unconfirmed; administrators may skip confirmation.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { createEmail } from '../../../domain/emails/create-email.ts';
import { deleteEmail, findUserEmail, userEmailsQuery } from '../../../domain/emails/emails.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { EmailSchema, presentEmail } from '../../entities/email.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { route } from '../../route.ts';

const userId = P.integer({ description: 'user id' });
// An integer, so `/user/emails/ASDF` is 400 (coercion) while `/users/ASDF/emails` is 404 (the
// :id route requirement), as reference §2.3 notes.
const emailId = P.integer({ description: 'email id' });

const params = {
  list: defineParams({ ...paginationParams }),
  one: defineParams({ email_id: emailId }),
  create: defineParams({ email: P.name({ description: 'the email address' }) }),
  listOf: defineParams({ id: userId, ...paginationParams }),
  createFor: defineParams({
    id: userId,
    email: P.name({ description: 'the email address' }),
    skip_confirmation: P.optional(P.boolean({ default: false, description: 'add the email already confirmed' })),
  }),
  oneOf: defineParams({ id: userId, email_id: emailId }),
};

const tags = ['emails'];
const EmailList = Type.Array(EmailSchema);

const userEmails: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function addEmail(owner: UserRow, email: string, skipConfirmation: boolean) {
    const result = await createEmail(db, { userId: owner.id, email, skipConfirmation });
    if (!result.ok) throw validationFailed(result.errors);
    return presentEmail(result.value);
  }

  async function emailOr404(owner: UserRow, id: number) {
    const email = await findUserEmail(db, owner.id, id);
    if (!email) throw notFound('Email');
    return email;
  }

  async function removeEmail(request: FastifyRequest, owner: UserRow, id: number) {
    const email = await emailOr404(owner, id);
    checkUnmodifiedSince(request, email.updated_at);
    await deleteEmail(db, email.id);
  }

  route(app, {
    method: 'GET', url: '/user/emails', auth: 'required', scopes: ['read_user'], params: params.list,
    schema: { summary: "The current user's secondary emails", tags, response: { 200: EmailList } },
  }, async ({ request, reply, caller }) => {
    const rows = await paginate(db, request, reply, userEmailsQuery(db, caller.user.id));
    return rows.map(presentEmail);
  });

  route(app, {
    method: 'GET', url: '/user/emails/:email_id', auth: 'required', scopes: ['read_user'], params: params.one,
    schema: { summary: "One of the current user's secondary emails", tags, response: { 200: EmailSchema } },
  }, async ({ input, caller }) => {
    const { email_id } = input;
    return presentEmail(await emailOr404(caller.user, email_id));
  });

  route(app, {
    method: 'POST', url: '/user/emails', auth: 'required', params: params.create,
    schema: { summary: 'Adds a secondary email to the current user (unconfirmed)', tags, response: { 201: EmailSchema } },
  }, async ({ reply, input, caller }) => {
    const { email } = input;
    reply.code(201);
    return addEmail(caller.user, email, false);
  });

  route(app, {
    method: 'DELETE', url: '/user/emails/:email_id', auth: 'required', params: params.one,
    schema: { summary: "Deletes one of the current user's secondary emails", tags },
  }, async ({ request, reply, input, caller }) => {
    const { email_id } = input;
    await removeEmail(request, caller.user, email_id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/emails', auth: 'non_get', scopes: ['read_user'], params: params.listOf,
    schema: { summary: "A user's secondary emails (administrators)", tags, response: { 200: EmailList } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { id } = input;
    const owner = await userOr404(db, id);
    const rows = await paginate(db, request, reply, userEmailsQuery(db, owner.id));
    return rows.map(presentEmail);
  });

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/emails', auth: 'required', params: params.createFor,
    schema: { summary: 'Adds a secondary email to a user (administrators)', tags, response: { 201: EmailSchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const owner = await userOr404(db, input.id);
    reply.code(201);
    return addEmail(owner, input.email, input.skip_confirmation === true);
  });

  route(app, {
    method: 'DELETE', url: '/users/:id(^\\d+$)/emails/:email_id', auth: 'required', params: params.oneOf,
    schema: { summary: "Deletes one of a user's secondary emails (administrators)", tags },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { id, email_id } = input;
    await removeEmail(request, await userOr404(db, id), email_id);
    return reply.code(204).send();
  });
};

export default userEmails;
