/**
 * Templates available to a project (the Service's lib/api/project_templates.rb with
 * TemplateFinder): kiln's `.gitignore`, Dockerfile and CI templates and the licences, as the
 * instance routes offer them, and the issue and merge request templates the project keeps in its
 * repository (`.gitlab/issue_templates/*.md`, `.gitlab/merge_request_templates/*.md` of the
 * default branch). A list is key and name; one template is its name and text, or for a licence
 * the whole licence with the project's name and the copyright holder (`fullname`, else the
 * caller's name) filled in. Readable by whoever may read the project (`authenticate_non_get!`).
 *
 * `metrics_dashboard_ymls` is not offered: kiln has no metrics dashboards to template. The
 * `source_template_project_id` parameter only chooses among instance template projects, which
 * the Service's Community Edition does not have either; it is taken and has no effect.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { findFileTemplate, listFileTemplates } from '../../../domain/templates/templates.ts';
import { findLicenseTemplate, listLicenseTemplates } from '../../../domain/templates/licenses.ts';
import { listRepoTemplates, readRepoTemplate } from '../../../domain/templates/repo-templates.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import { loadProject, type ProjectContext } from '../../loaders/containers.ts';
import {
  LicenseSchema, presentLicense, presentTemplate, presentTemplatesList, TemplateSchema, TemplatesListSchema,
} from '../../entities/template.ts';
import { compileSerializer, serializeWith } from '../../entities/serializers.ts';
import { route } from '../../route.ts';

const TYPES = ['dockerfiles', 'gitignores', 'gitlab_ci_ymls', 'licenses', 'issues', 'merge_requests'] as const;
type TemplateType = typeof TYPES[number];

/** A path `type` that is not storable text arrives as '' (input/params.ts): it names no type, as no route matches it. */
function knownType(type: string): TemplateType {
  if (!(TYPES as readonly string[]).includes(type)) throw notFound();
  return type as TemplateType;
}

const projectAndType = {
  id: P.string({ description: 'project id or path' }),
  type: P.oneOf(TYPES, { description: 'the type of template' }),
};

const params = {
  list: defineParams({ ...projectAndType, ...paginationParams }),
  one: defineParams({
    ...projectAndType,
    name: P.name({ description: 'the name of the template' }),
    source_template_project_id: P.optional(P.integer({ description: 'the instance template project holding the template' })),
    project: P.optional(P.name({ description: "the project's name, filled into a licence text" })),
    fullname: P.optional(P.name({ description: 'the copyright holder, filled into a licence text' })),
  }),
};

const tags = ['project_templates'];
/** A licence is a License, any other template a Template: the route's answer is one or the other. */
const serializeLicense = compileSerializer(LicenseSchema);

const projectTemplates: FastifyPluginAsync = async (app) => {
  const { config } = app.kiln;

  function gitDirOf(ctx: ProjectContext): string {
    return projectRepository(config.storages, ctx.project).gitDir;
  }

  async function names(ctx: ProjectContext, type: TemplateType): Promise<{ key: string; name: string }[]> {
    switch (type) {
      case 'licenses': {
        // LicenseTemplateFinder#template_names groups by category in the order the sorted list
        // first meets each (Other before Popular), and the API flattens the groups.
        const all = listLicenseTemplates();
        return [...all.filter((l) => !l.popular), ...all.filter((l) => l.popular)];
      }
      case 'issues':
      case 'merge_requests':
        return listRepoTemplates(gitDirOf(ctx), ctx.project.default_branch, type);
      default:
        return listFileTemplates(type);
    }
  }

  route(app, {
    method: 'GET', url: '/projects/:id/templates/:type', auth: 'optional', params: params.list,
    schema: { summary: 'The templates of a type available to a project', tags, response: { 200: Type.Array(TemplatesListSchema) } },
  }, async ({ request, reply, input }) => {
    const type = knownType(input.type);
    const ctx = await loadProject(request, input.id);
    return paginateArray(request, reply, await names(ctx, type)).map(presentTemplatesList);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/templates/:type/:name', auth: 'optional', params: params.one,
    schema: {
      summary: 'One template available to a project', tags,
      response: { 200: Type.Union([TemplateSchema, LicenseSchema]) },
    },
  }, async ({ request, reply, input, caller }) => {
    const type = knownType(input.type);
    const ctx = await loadProject(request, input.id);
    if (type === 'licenses') {
      const found = findLicenseTemplate(input.name, {
        project: input.project || null, fullname: input.fullname || caller?.user.name || null,
      });
      if (!found) throw notFound('Template');
      serializeWith(reply, serializeLicense);
      return presentLicense(found);
    }
    const found = type === 'issues' || type === 'merge_requests'
      ? await readRepoTemplate(gitDirOf(ctx), ctx.project.default_branch, type, input.name)
      : findFileTemplate(type, input.name);
    if (!found) throw notFound('Template');
    return presentTemplate(found);
  });
};

export default projectTemplates;
