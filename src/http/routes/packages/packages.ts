/**
 * The package registry's lists and packages (the Service's lib/api/packages.rb,
 * lib/api/group_packages.rb and lib/api/package_files.rb, 15.2, with app/finders/packages/*):
 *
 * - `GET /projects/:id/packages` and `GET /groups/:id/packages` (the group's projects, its
 *   subgroups' unless exclude_subgroups, those whose packages the caller may read), ordered by
 *   created_at, name, version, type (or project_path for groups), filtered by package_type,
 *   package_name (a part of it), include_versionless and status; without a status only the
 *   displayable ones (default, error): hidden packages are not listed.
 * - `GET` / `DELETE /projects/:id/packages/:package_id` (a displayable package, with its other
 *   versions when shown alone; removing it is the Maintainer's).
 * - `GET /projects/:id/packages/:package_id/package_files` and
 *   `DELETE …/package_files/:package_file_id`.
 *
 * Reading takes read_package (Reporter on a private project, anyone who sees a public or
 * internal one); a missing package or file is `404 Not found`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { PackageRow } from '../../../db/tables/packages.ts';
import { descendantGroupIds, namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { projectsInNamespaces } from '../../../domain/projects/projects.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { deletePackage, deletePackageFile } from '../../../domain/packages/generic-packages.ts';
import {
  DISPLAYABLE_STATUSES, PACKAGE_STATUSES, PACKAGE_TYPES, statusValue,
} from '../../../domain/packages/package-names.ts';
import {
  findPackageFile, findProjectPackage, otherVersions, packageFilesQuery, packagePipelineIds, packagesQuery,
} from '../../../domain/packages/packages.queries.ts';
import { recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginateArray, paginationParams } from '../../lists/pagination.ts';
import { loadGroup } from '../../loaders/containers.ts';
import {
  loadPackagePipelines, PackageFileListSchema, PackageListSchema, PackageSchema, presentPackage, presentPackageFile, type PackageProject,
} from '../../entities/package.ts';
import { route } from '../../route.ts';
import { loadPackageProject, mayOnPackages, type PackageProjectContext } from './package-access.ts';

const filterParams = {
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc', description: 'asc (default) or desc' })),
  package_type: P.optional(P.oneOf(PACKAGE_TYPES, { description: 'only packages of this type' })),
  package_name: P.optional(P.name({ description: 'only packages whose name contains this' })),
  include_versionless: P.optional(P.boolean({ description: 'also packages without a version' })),
  status: P.optional(P.oneOf(PACKAGE_STATUSES, { description: 'only packages of this status' })),
};
const projectListParams = defineParams({
  id: P.string(), ...paginationParams, ...filterParams,
  order_by: P.optional(P.oneOf(['created_at', 'name', 'version', 'type'] as const, { default: 'created_at', description: 'the order' })),
});
const groupListParams = defineParams({
  id: P.string(), ...paginationParams, ...filterParams,
  exclude_subgroups: P.optional(P.boolean({ default: false, description: 'leave out the packages of subgroups' })),
  order_by: P.optional(P.oneOf(['created_at', 'name', 'version', 'type', 'project_path'] as const, {
    default: 'created_at', description: 'the order',
  })),
});
const packageParams = defineParams({ id: P.string(), package_id: P.integer() });
const filesParams = defineParams({ id: P.string(), package_id: P.integer(), ...paginationParams });
const fileParams = defineParams({ id: P.string(), package_id: P.integer(), package_file_id: P.integer() });

function filterOf(input: {
  package_type?: string; package_name?: string; include_versionless?: boolean; status?: typeof PACKAGE_STATUSES[number];
}) {
  return {
    packageType: input.package_type, packageName: input.package_name, includeVersionless: input.include_versionless,
    status: input.status === undefined ? undefined : statusValue(input.status), displayable: DISPLAYABLE_STATUSES,
  };
}

const packages: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const tags = ['packages'];

  function projectOf(ctx: PackageProjectContext): PackageProject {
    return { id: ctx.project.id, fullPath: ctx.fullPath, canDestroy: mayOnPackages(ctx, 'destroy_package'), canRead: true };
  }

  async function presentList(rows: PackageRow[], owners: Map<number, PackageProject>, group: boolean) {
    const paths = new Map([...owners].map(([id, o]) => [id, o.fullPath]));
    const ids = await packagePipelineIds(db, rows);
    const pipelines = await loadPackagePipelines(db, config.externalUrl, [...ids.values()].flat(), paths);
    return rows.map((r) => presentPackage(
      r, owners.get(r.project_id)!, config.externalUrl, pipelines, { group, pipelineIds: ids.get(r.id) },
    ));
  }

  async function findPackage(ctx: PackageProjectContext, id: number): Promise<PackageRow> {
    const pkg = await findProjectPackage(db, ctx.project.id, id, DISPLAYABLE_STATUSES);
    if (!pkg) throw recordNotFound();
    return pkg;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/packages', auth: 'optional', params: projectListParams,
    schema: { summary: "A project's packages", tags, response: { 200: PackageListSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadPackageProject(request, input.id, 'read_package');
    const rows = await paginate(db, request, reply, packagesQuery(db, [ctx.project.id], filterOf(input), input.order_by, input.sort));
    return presentList(rows, new Map([[ctx.project.id, projectOf(ctx)]]), false);
  });

  route(app, {
    method: 'GET', url: '/groups/:id/packages', auth: 'optional', params: groupListParams,
    schema: { summary: "The packages of a group's projects", tags, response: { 200: PackageListSchema } },
  }, async ({ request, reply, input }) => {
    const group = await loadGroup(request, input.id);
    const namespaceIds = input.exclude_subgroups
      ? [group.group.id]
      : [group.group.id, ...(await descendantGroupIds(db, [group.group.id])).keys()];
    const projects = await projectsInNamespaces(db, namespaceIds).execute();
    const paths = await namespacePathsById(db, [...new Set(projects.map((p) => p.namespace_id))]);
    const viewer = request.caller?.user ?? null;
    const owners = new Map<number, PackageProject>();
    for (const project of projects) {
      const ns = paths.get(project.namespace_id);
      if (!ns) continue;
      const actor = await projectActor(db, viewer, project.id, ns.lineage);
      if (!canOnProject(actor, 'read_project', project)) continue;
      const ctx: PackageProjectContext = { project, fullPath: `${ns.fullPath}/${project.path}`, lineage: ns.lineage, actor, deployToken: null };
      if (mayOnPackages(ctx, 'read_package')) owners.set(project.id, projectOf(ctx));
    }
    // No project whose packages the caller may read: nothing to ask the database.
    const rows = owners.size
      ? await paginate(db, request, reply, packagesQuery(db, [...owners.keys()], filterOf(input), input.order_by, input.sort))
      : paginateArray(request, reply, [] as PackageRow[]);
    return presentList(rows, owners, true);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/packages/:package_id', auth: 'optional', params: packageParams,
    schema: { summary: 'A package, with its other versions', tags, response: { 200: PackageSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadPackageProject(request, input.id, 'read_package');
    const pkg = await findPackage(ctx, input.package_id);
    const versions = await otherVersions(db, pkg);
    const ids = (await packagePipelineIds(db, [pkg])).get(pkg.id) ?? [];
    const pipelines = await loadPackagePipelines(
      db, config.externalUrl, [...ids, ...versions.map((v) => v.pipeline_id)], new Map([[ctx.project.id, ctx.fullPath]]),
    );
    return presentPackage(pkg, projectOf(ctx), config.externalUrl, pipelines, { group: false, versions, pipelineIds: ids });
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/packages/:package_id', auth: 'required', params: packageParams,
    schema: { summary: 'Delete a package and its files', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadPackageProject(request, input.id, 'destroy_package');
    const pkg = await findPackage(ctx, input.package_id);
    await deletePackage(db, config.dataDir, pkg);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/projects/:id/packages/:package_id/package_files', auth: 'optional', params: filesParams,
    schema: { summary: "A package's files", tags, response: { 200: PackageFileListSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadPackageProject(request, input.id, 'read_package');
    const pkg = await findPackage(ctx, input.package_id);
    const rows = await paginate(db, request, reply, packageFilesQuery(db, pkg.id));
    const paths = new Map([[ctx.project.id, ctx.fullPath]]);
    const pipelines = await loadPackagePipelines(db, config.externalUrl, rows.map((r) => r.pipeline_id), paths);
    return rows.map((r) => presentPackageFile(r, pipelines));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/packages/:package_id/package_files/:package_file_id', auth: 'required', params: fileParams,
    schema: { summary: 'Delete a file of a package', tags, response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadPackageProject(request, input.id, 'destroy_package');
    const pkg = await findPackage(ctx, input.package_id);
    const file = await findPackageFile(db, pkg.id, input.package_file_id);
    if (!file) throw recordNotFound();
    await deletePackageFile(db, config.dataDir, file);
    return reply.code(204).send();
  });
};

export default packages;
