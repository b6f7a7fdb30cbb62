/**
 * Instance-wide OAuth applications for administrators (CONTRACT §4; the Service's
 * lib/api/applications.rb): create (the secret is in this response only), list, delete.
 * Applications users register on /profile/applications are theirs and not managed here.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { createApplication } from '../../../domain/oauth/create-application.ts';
import { deleteApplication } from '../../../domain/oauth/delete-application.ts';
import { findApplicationById, listInstanceApplications } from '../../../domain/oauth/oauth.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { invalidParams, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import {
  ApplicationSchema, ApplicationWithSecretSchema, presentApplication, presentApplicationWithSecret,
} from '../../entities/application.ts';
import { auditUser } from '../../audit.ts';
import { route } from '../../route.ts';

const tags = ['applications'];

const createParams = defineParams({
  name: P.string({ description: 'name of the application' }),
  redirect_uri: P.string({ description: 'redirect URI(s), separated by whitespace or new lines' }),
  scopes: P.string({ description: 'scopes of the application, separated by spaces' }),
  confidential: P.optional(P.boolean({ default: true, description: 'whether the client secret can be kept confidential' })),
});

const idParams = defineParams({ id: P.integer({ description: 'the application id (not the client_id)' }) });

const applications: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  // The Service's `before { authenticated_as_admin! }`: before parameter validation (Grape runs
  // `before` callbacks first), so a non-administrator learns nothing about the parameters.
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  route(app, {
    method: 'POST', url: '/applications', auth: 'required', params: createParams,
    schema: { summary: 'Create an application (administrators)', tags, response: { 201: ApplicationWithSecretSchema } },
    preValidation: adminOnly,
  }, async ({ request, reply, input, caller }) => {
    // Grape's `allow_blank: false` on scopes.
    if (input.scopes.trim() === '') throw invalidParams(['scopes is empty']);
    const result = await createApplication(db, {
      name: input.name, redirectUri: input.redirect_uri, scopes: input.scopes.split(/\s+/).filter(Boolean),
      confidential: input.confidential ?? true,
    }, null);
    if (!result.ok) throw validationFailed(result.errors);
    await auditUser(request, caller.user, `Created OAuth application ${result.value.application.name} (${result.value.application.id})`);
    reply.code(201);
    return presentApplicationWithSecret(result.value.application, result.value.secret);
  });

  route(app, {
    method: 'GET', url: '/applications', auth: 'required',
    schema: { summary: 'List instance-wide applications (administrators)', tags, response: { 200: Type.Array(ApplicationSchema) } },
    preValidation: adminOnly,
  }, async (_context) => {
    return (await listInstanceApplications(db)).map(presentApplication);
  });

  route(app, {
    method: 'DELETE', url: '/applications/:id', auth: 'required', params: idParams,
    schema: { summary: 'Delete an application and its tokens (administrators)', tags },
    preValidation: adminOnly,
  }, async ({ request, reply, input, caller }) => {
    const { id } = input;
    const application = await findApplicationById(db, id);
    if (!application || application.owner_id !== null) throw notFound('Application');
    await deleteApplication(db, id);
    await auditUser(request, caller.user, `Deleted OAuth application ${application.name} (${application.id})`);
    return reply.code(204).send();
  });
};

export default applications;
