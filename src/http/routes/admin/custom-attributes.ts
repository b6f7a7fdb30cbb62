/**
 * Custom attributes of projects and groups (the Service's lib/api/custom_attributes_endpoints.rb,
 * mounted on Projects and Groups; users' are in the users area): administrators list, read, set
 * and delete key/value pairs. The admin check comes first, then the holder's lookup.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  deleteHolderAttribute, findHolderAttribute, holderAttributesQuery, upsertHolderAttribute, type AttributeHolder,
} from '../../../domain/custom-attributes/custom-attributes.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const CustomAttributeSchema = Type.Object({ key: Type.String(), value: Type.String() }, { title: 'CustomAttribute' });

const customAttributes: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  for (const kind of ['project', 'group'] as const) {
    const base = `/${kind}s/:id/custom_attributes`;
    const tags = [`${kind}s`];
    const id = P.string({ description: `${kind} id or URL-encoded full path` });
    // The key and value are varchar(255) columns (issue 13).
    const listParams = defineParams({ id, ...paginationParams });
    const keyParams = defineParams({ id, key: P.name({ description: 'attribute key' }) });
    const setParams = defineParams({
      id, key: P.name({ description: 'attribute key' }), value: P.name({ description: 'attribute value' }),
    });

    const holderOf = async (request: FastifyRequest, idOrPath: string): Promise<AttributeHolder> => kind === 'project'
      ? { kind, id: (await loadProject(request, idOrPath)).project.id }
      : { kind, id: (await loadGroup(request, idOrPath)).group.id };

    route(app, {
      method: 'GET', url: base, auth: 'required', params: listParams,
      schema: { summary: `A ${kind}'s custom attributes (administrators)`, tags, response: { 200: Type.Array(CustomAttributeSchema) } },
    }, async ({ request, reply, input }) => {
      authenticatedAsAdmin(request);
      const holder = await holderOf(request, input.id);
      return paginate(db, request, reply, holderAttributesQuery(db, holder));
    });

    route(app, {
      method: 'GET', url: `${base}/:key`, auth: 'required', params: keyParams,
      schema: { summary: `One custom attribute of a ${kind} (administrators)`, tags, response: { 200: CustomAttributeSchema } },
    }, async ({ request, input }) => {
      authenticatedAsAdmin(request);
      const attribute = await findHolderAttribute(db, await holderOf(request, input.id), input.key);
      // find_by! → ActiveRecord::RecordNotFound → "404 Not found".
      if (!attribute) throw recordNotFound();
      return attribute;
    });

    route(app, {
      method: 'PUT', url: `${base}/:key`, auth: 'required', params: setParams,
      schema: { summary: `Set a custom attribute of a ${kind} (administrators)`, tags, response: { 200: CustomAttributeSchema } },
    }, async ({ request, input }) => {
      authenticatedAsAdmin(request);
      const holder = await holderOf(request, input.id);
      if (input.value.trim() === '') throw validationFailed({ value: ["can't be blank"] });
      return upsertHolderAttribute(db, holder, input.key, input.value);
    });

    route(app, {
      method: 'DELETE', url: `${base}/:key`, auth: 'required', params: keyParams,
      schema: { summary: `Delete a custom attribute of a ${kind} (administrators)`, tags, response: { 204: Type.Null() } },
    }, async ({ request, reply, input }) => {
      authenticatedAsAdmin(request);
      if (!await deleteHolderAttribute(db, await holderOf(request, input.id), input.key)) throw recordNotFound();
      return reply.code(204).send();
    });
  }
};

export default customAttributes;
