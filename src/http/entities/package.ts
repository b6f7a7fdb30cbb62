/**
 * Package entities (the Service's lib/api/entities/package.rb, package_version.rb,
 * package_file.rb and package/pipeline.rb, 15.2): Package with its _links, its project in group
 * lists, its original pipeline and the pipelines of its builds, and its other versions when shown
 * alone; PackageFile with its checksums.
 */
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { PackageFileRow, PackageRow } from '../../db/tables/packages.ts';
import { statusName } from '../../domain/packages/package-names.ts';
import { pipelinesByIds } from '../../domain/packages/packages.queries.ts';
import { findUserById } from '../../domain/users/users.queries.ts';
import { PipelineBasicSchema, presentPipelineBasic } from './pipeline.ts';
import { UserBasicSchema, presentUserBasic } from './user.ts';
import { exactJson, flat } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const PackagePipelineSchema = Type.Object({
  ...PipelineBasicSchema.properties,
  user: Type.Union([UserBasicSchema, Type.Null()]),
}, { title: 'PackagePipeline' });
type PackagePipeline = Static<typeof PackagePipelineSchema>;

export const PackageVersionSchema = Type.Object({
  id: Type.Integer(),
  version: NString,
  created_at: Type.String(),
  tags: Type.Array(Type.Unknown()),
  pipeline: Type.Optional(PackagePipelineSchema),
}, { title: 'PackageVersion' });

export const PackageSchema = exactJson(Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  version: NString,
  package_type: Type.String(),
  status: Type.String(),
  _links: Type.Object({ web_path: Type.String(), delete_api_path: Type.Optional(Type.String()) }),
  created_at: Type.String(),
  project_id: Type.Optional(Type.Integer()),
  project_path: Type.Optional(Type.String()),
  tags: Type.Array(Type.Unknown()),
  pipeline: Type.Optional(PackagePipelineSchema),
  pipelines: Type.Optional(Type.Array(PackagePipelineSchema)),
  versions: Type.Optional(Type.Array(PackageVersionSchema)),
}, { title: 'Package' }));
/** Lists of packages, written in the presenter's (the Service's) key order. */
export const PackageListSchema = exactJson(Type.Array(PackageSchema));

export const PackageFileSchema = exactJson(Type.Object({
  id: Type.Integer(),
  package_id: Type.Integer(),
  created_at: Type.String(),
  file_name: Type.String(),
  size: Type.Integer(),
  file_md5: NString,
  file_sha1: NString,
  file_sha256: NString,
  pipelines: Type.Optional(Type.Array(PackagePipelineSchema)),
}, { title: 'PackageFile' }));
export const PackageFileListSchema = exactJson(Type.Array(PackageFileSchema));

/** The project of a package as the entity needs it. */
export interface PackageProject {
  id: number;
  fullPath: string;
  /** Whether the viewer may remove its packages (the delete_api_path link). */
  canDestroy: boolean;
  /** Whether the viewer may read the project (project_path in group lists). */
  canRead: boolean;
}

/** The pipelines (with their users) that packages and files name, read once per answer. */
export async function loadPackagePipelines(db: Kysely<DB>, externalUrl: string, ids: (number | null)[], projectPaths: Map<number, string>) {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
  const rows: PipelineRow[] = await pipelinesByIds(db, wanted);
  const users = new Map<number, UserRow | undefined>();
  for (const r of rows) if (r.user_id !== null && !users.has(r.user_id)) users.set(r.user_id, await findUserById(db, r.user_id));
  const out = new Map<number, PackagePipeline>();
  for (const r of rows) {
    const path = projectPaths.get(r.project_id);
    if (path === undefined) continue;
    const user = r.user_id === null ? undefined : users.get(r.user_id);
    out.set(r.id, {
      ...presentPipelineBasic(r, flat(externalUrl, '/', path)),
      user: user ? presentUserBasic(user, {}, { externalUrl, canReadProfile: true }) : null,
    });
  }
  return out;
}

export function presentPackage(
  pkg: PackageRow, project: PackageProject, externalUrl: string, pipelines: Map<number, PackagePipeline>,
  o: { group: boolean; versions?: PackageRow[]; pipelineIds?: number[] },
): Static<typeof PackageSchema> {
  const links: { web_path: string; delete_api_path?: string } = { web_path: `/${project.fullPath}/-/packages/${pkg.id}` };
  if (project.canDestroy) links.delete_api_path = flat(externalUrl, '/api/v4/projects/', pkg.project_id, '/packages/', pkg.id);
  const e = {
    id: pkg.id, name: pkg.name, version: pkg.version, package_type: pkg.package_type, status: statusName(pkg.status),
    _links: links, created_at: pkg.created_at,
  } as Static<typeof PackageSchema>;
  if (o.group) {
    e.project_id = pkg.project_id;
    if (project.canRead) e.project_path = project.fullPath;
  }
  e.tags = [];
  const pipeline = pkg.pipeline_id === null ? undefined : pipelines.get(pkg.pipeline_id);
  if (pipeline) e.pipeline = pipeline;
  const all = (o.pipelineIds ?? []).map((id) => pipelines.get(id)).filter((p): p is PackagePipeline => p !== undefined);
  if (all.length) e.pipelines = all;
  if (o.versions) {
    e.versions = o.versions.map((v) => {
      const pv: Static<typeof PackageVersionSchema> = { id: v.id, version: v.version, created_at: v.created_at, tags: [] };
      const vp = v.pipeline_id === null ? undefined : pipelines.get(v.pipeline_id);
      if (vp) pv.pipeline = vp;
      return pv;
    });
  }
  return e;
}

export function presentPackageFile(file: PackageFileRow, pipelines: Map<number, PackagePipeline>): Static<typeof PackageFileSchema> {
  const e: Static<typeof PackageFileSchema> = {
    id: file.id, package_id: file.package_id, created_at: file.created_at, file_name: file.file_name, size: Number(file.size),
    file_md5: file.file_md5, file_sha1: file.file_sha1, file_sha256: file.file_sha256,
  };
  const p = file.pipeline_id === null ? undefined : pipelines.get(file.pipeline_id);
  if (p) e.pipelines = [p];
  return e;
}
