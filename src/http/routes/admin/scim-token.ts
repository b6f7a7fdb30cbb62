/**
 * POST /groups/:id/scim_token: a group owner creates the group's SCIM token, or replaces it by
 * calling again (the Service offers this on the group's SAML SSO settings page; kiln through the
 * API). The token is shown once, in the 201 body, and stored only as a digest; it authenticates
 * the group's SCIM API (/api/scim/v2/groups/:group_path) and nothing else.
 *
 * SCIM, like the Service's group SAML, belongs to top-level groups: a sub-group's members come
 * from its top-level group's provisioning.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { createScimToken } from '../../../domain/scim/scim-token.ts';
import { badRequest } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeGroup, loadGroup } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const params = defineParams({ id: P.string({ description: 'group id or URL-encoded full path' }) });

const scimToken: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'POST', url: '/groups/:id/scim_token', auth: 'required', params,
    schema: {
      summary: "Create or replace a group's SCIM token (owners)", tags: ['groups'],
      response: { 201: Type.Object({ token: Type.String() }) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    if (ctx.group.parent_id !== null) throw badRequest('SCIM provisioning is configured on top-level groups only');
    const token = await createScimToken(app.kiln.db, ctx.group.id);
    return reply.code(201).send({ token });
  });
};

export default scimToken;
