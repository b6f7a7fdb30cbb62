/**
 * Instance templates (the Service's lib/api/templates.rb): `.gitignore` files, Dockerfiles and CI
 * configurations (list: key and name; one: name and text, 404 `<type> Not Found`), and licences
 * (list with every field and the text, `popular` for the featured three; one with the year, the
 * project's name and the copyright holder filled in, the caller's name when `fullname` is not
 * given). No authentication is needed: the routes have no `authenticate!`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { findFileTemplate, listFileTemplates, type FileTemplateType } from '../../../domain/templates/templates.ts';
import { findLicenseTemplate, listLicenseTemplates } from '../../../domain/templates/licenses.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import {
  LicenseSchema, presentLicense, presentTemplate, presentTemplatesList, TemplateSchema, TemplatesListSchema,
} from '../../entities/template.ts';
import { route } from '../../route.ts';

/** Each file template type, and the word its 404 uses (the type singularized). */
const FILE_TYPES: [FileTemplateType, string][] = [
  ['gitignores', 'gitignore'],
  ['gitlab_ci_ymls', 'gitlab_ci_yml'],
  ['dockerfiles', 'dockerfile'],
];

const params = {
  list: defineParams({ ...paginationParams }),
  one: defineParams({ name: P.name({ description: 'the name of the template' }) }),
  licenses: defineParams({
    popular: P.optional(P.boolean({ description: 'only the popular licences' })),
    ...paginationParams,
  }),
  license: defineParams({
    name: P.name({ description: 'the key of the licence' }),
    project: P.optional(P.name({ description: "the project's name, filled into the licence text" })),
    fullname: P.optional(P.name({ description: 'the copyright holder, filled into the licence text' })),
  }),
};

const tags = ['templates'];

const templates: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/templates/licenses', auth: 'optional', params: params.licenses,
    schema: { summary: 'The licence templates', tags, response: { 200: Type.Array(LicenseSchema) } },
  }, async ({ request, reply, input }) => (
    paginateArray(request, reply, listLicenseTemplates({ popular: input.popular === true })).map(presentLicense)
  ));

  route(app, {
    method: 'GET', url: '/templates/licenses/:name', auth: 'optional', params: params.license,
    schema: { summary: 'One licence template, its placeholders filled in', tags, response: { 200: LicenseSchema } },
  }, async ({ input, caller }) => {
    const found = findLicenseTemplate(input.name, {
      project: input.project || null, fullname: input.fullname || caller?.user.name || null,
    });
    if (!found) throw notFound('License');
    return presentLicense(found);
  });

  for (const [type, singular] of FILE_TYPES) {
    route(app, {
      method: 'GET', url: `/templates/${type}`, auth: 'optional', params: params.list,
      schema: { summary: `The ${singular} templates`, tags, response: { 200: Type.Array(TemplatesListSchema) } },
    }, async ({ request, reply }) => paginateArray(request, reply, listFileTemplates(type)).map(presentTemplatesList));

    route(app, {
      method: 'GET', url: `/templates/${type}/:name`, auth: 'optional', params: params.one,
      schema: { summary: `One ${singular} template`, tags, response: { 200: TemplateSchema } },
    }, async ({ input }) => {
      const found = findFileTemplate(type, input.name);
      if (!found) throw notFound(singular);
      return presentTemplate(found);
    });
  }
};

export default templates;
