/**
 * A user's custom attributes (spec, User: custom attributes; the Service's
 * CustomAttributesEndpoints): administrators list, read, set and delete key/value pairs.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  customAttributesQuery, deleteCustomAttribute, findCustomAttribute, upsertCustomAttribute,
} from '../../../domain/users/users.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { recordNotFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { userOr404 } from '../../user-lookup.ts';
import { route } from '../../route.ts';

const CustomAttributeSchema = Type.Object({ key: Type.String(), value: Type.String() }, { title: 'CustomAttribute' });

const listParams = defineParams({ id: P.integer({ description: 'user id' }), ...paginationParams });
// CustomAttribute's key and value are varchar(255) columns, the pair indexed (issue 13).
const keyParams = defineParams({ id: P.integer({ description: 'user id' }), key: P.name({ description: 'attribute key' }) });
const setParams = defineParams({
  id: P.integer({ description: 'user id' }),
  key: P.name({ description: 'attribute key' }),
  value: P.name({ description: 'attribute value' }),
});

const userCustomAttributes: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/custom_attributes', auth: 'required', scopes: ['read_user'], params: listParams,
    schema: {
      summary: "A user's custom attributes (administrators)",
      tags: ['users'],
      response: { 200: Type.Array(CustomAttributeSchema) },
    },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    return paginate(db, request, reply, customAttributesQuery(db, user.id));
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/custom_attributes/:key', auth: 'required', scopes: ['read_user'], params: keyParams,
    schema: { summary: 'One custom attribute of a user (administrators)', tags: ['users'], response: { 200: CustomAttributeSchema } },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    const attribute = await findCustomAttribute(db, user.id, input.key);
    // find_by! → ActiveRecord::RecordNotFound → "404 Not found" (reference §6.2).
    if (!attribute) throw recordNotFound();
    return { key: attribute.key, value: attribute.value };
  });

  route(app, {
    method: 'PUT', url: '/users/:id(^\\d+$)/custom_attributes/:key', auth: 'required', params: setParams,
    schema: { summary: 'Set a custom attribute of a user (administrators)', tags: ['users'], response: { 200: CustomAttributeSchema } },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    if (input.value.trim() === '') throw validationFailed({ value: ["can't be blank"] });
    return upsertCustomAttribute(db, user.id, input.key, input.value);
  });

  route(app, {
    method: 'DELETE', url: '/users/:id(^\\d+$)/custom_attributes/:key', auth: 'required', params: keyParams,
    schema: { summary: 'Delete a custom attribute of a user (administrators)', tags: ['users'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    const attribute = await findCustomAttribute(db, user.id, input.key);
    if (!attribute) throw recordNotFound();
    await deleteCustomAttribute(db, attribute.id);
    return reply.code(204).send();
  });
};

export default userCustomAttributes;
