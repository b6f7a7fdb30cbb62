/**
 * Broadcast messages (the Service's lib/api/broadcast_messages.rb): anyone reads them, newest
 * first; administrators create, update and delete them.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  ALLOWED_TARGET_ACCESS_LEVELS, BROADCAST_TYPES, changeBroadcastMessage, createBroadcastMessage, findBroadcastMessage,
  type BroadcastMessageInput,
} from '../../../domain/broadcast-messages/broadcast-messages.ts';
import { broadcastMessagesQuery, deleteBroadcastMessage } from '../../../domain/broadcast-messages/broadcast-messages.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { BroadcastMessageSchema, presentBroadcastMessage } from '../../entities/broadcast-message.ts';
import { invalidParams, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { route } from '../../route.ts';

const tags = ['broadcast_messages'];

const fields = {
  starts_at: P.optional(P.dateTime({ description: 'when the message starts showing (default now)' })),
  ends_at: P.optional(P.dateTime({ description: 'when the message stops showing (default an hour from now)' })),
  color: P.optional(P.name({ description: 'background colour, #RGB or #RRGGBB' })),
  font: P.optional(P.name({ description: 'foreground colour, #RGB or #RRGGBB' })),
  target_access_levels: P.optional(P.array(P.integer(), {
    commaSeparated: true, description: 'roles shown the message (10, 20, 30, 40, 50)',
  })),
  target_path: P.optional(P.name({ description: 'paths the message shows on' })),
  broadcast_type: P.optional(P.oneOf(BROADCAST_TYPES, { description: 'banner (default) or notification' })),
  dismissable: P.optional(P.boolean({ description: 'whether users may dismiss the message' })),
};
// The message is text (cache_markdown_field); bounded like any other text.
const createParams = defineParams({ message: P.string({ maxLength: 65_535, description: 'the message (Markdown)' }), ...fields });
const updateParams = defineParams({
  id: P.integer({ description: 'broadcast message id' }),
  message: P.optional(P.string({ maxLength: 65_535, description: 'the message (Markdown)' })),
  ...fields,
});
const idParams = defineParams({ id: P.integer({ description: 'broadcast message id' }) });

type FieldInput = {
  message?: string; starts_at?: string; ends_at?: string; color?: string; font?: string;
  target_access_levels?: number[]; target_path?: string; broadcast_type?: (typeof BROADCAST_TYPES)[number]; dismissable?: boolean;
};

function toInput(input: FieldInput): BroadcastMessageInput {
  // Grape's `values: ALLOWED_TARGET_ACCESS_LEVELS`.
  if (input.target_access_levels?.some((l) => !(ALLOWED_TARGET_ACCESS_LEVELS as readonly number[]).includes(l))) {
    throw invalidParams(['target_access_levels does not have a valid value']);
  }
  return {
    message: input.message, startsAt: input.starts_at, endsAt: input.ends_at, color: input.color, font: input.font,
    targetAccessLevels: input.target_access_levels, targetPath: input.target_path, broadcastType: input.broadcast_type,
    dismissable: input.dismissable,
  };
}

const broadcastMessages: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/broadcast_messages', auth: 'optional', params: defineParams({ ...paginationParams }),
    schema: { summary: 'List broadcast messages, newest first', tags, response: { 200: Type.Array(BroadcastMessageSchema) } },
  }, async ({ request, reply }) => {
    const now = Date.now();
    return (await paginate(db, request, reply, broadcastMessagesQuery(db))).map((m) => presentBroadcastMessage(m, now));
  });

  route(app, {
    method: 'GET', url: '/broadcast_messages/:id', auth: 'optional', params: idParams,
    schema: { summary: 'One broadcast message', tags, response: { 200: BroadcastMessageSchema } },
  }, async ({ input }) => {
    const message = await findBroadcastMessage(db, input.id);
    // BroadcastMessage.find → RecordNotFound.
    if (!message) throw recordNotFound();
    return presentBroadcastMessage(message);
  });

  route(app, {
    method: 'POST', url: '/broadcast_messages', auth: 'required', params: createParams,
    schema: { summary: 'Create a broadcast message (administrators)', tags, response: { 201: BroadcastMessageSchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const result = await createBroadcastMessage(db, { ...toInput(input), message: input.message });
    if (!result.ok) throw validationFailed(result.errors);
    reply.code(201);
    return presentBroadcastMessage(result.message);
  });

  route(app, {
    method: 'PUT', url: '/broadcast_messages/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a broadcast message (administrators)', tags, response: { 200: BroadcastMessageSchema } },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const existing = await findBroadcastMessage(db, input.id);
    if (!existing) throw recordNotFound();
    const result = await changeBroadcastMessage(db, existing, toInput(input));
    if (!result.ok) throw validationFailed(result.errors);
    return presentBroadcastMessage(result.message);
  });

  route(app, {
    method: 'DELETE', url: '/broadcast_messages/:id', auth: 'required', params: idParams,
    schema: { summary: 'Delete a broadcast message (administrators)', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const existing = await findBroadcastMessage(db, input.id);
    if (!existing) throw recordNotFound();
    await deleteBroadcastMessage(db, existing.id);
    return reply.code(204).send();
  });
};

export default broadcastMessages;
