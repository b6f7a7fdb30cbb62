/** Every Kysely call of the package registry. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PackageFileRow, PackageRow } from '../../db/tables/packages.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface PackageListFilter {
  packageType?: string;
  /** A part of the name (Packages::Package.search_by_name: ILIKE %name%). */
  packageName?: string;
  includeVersionless?: boolean;
  /** A status value; absent: the displayable ones. */
  status?: number;
  displayable: number[];
}

export type PackageOrder = 'created_at' | 'name' | 'version' | 'type' | 'project_path';

/** The likeness pattern of a text, its `%` and `_` matched literally. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Packages::PackagesFinder / GroupPackagesFinder: the packages of some projects, filtered and in
 * the asked order, ties by id in the same direction (the Service's order scopes).
 */
export function packagesQuery(db: Db, projectIds: number[], f: PackageListFilter, orderBy: PackageOrder, sort: 'asc' | 'desc') {
  let q = db.selectFrom('packages').selectAll('packages').where('packages.project_id', 'in', projectIds);
  if (f.packageType !== undefined) q = q.where('packages.package_type', '=', f.packageType);
  if (f.packageName !== undefined) {
    q = q.where(sql<boolean>`lower(packages.name) like ${containsPattern(f.packageName)} escape '\\'`);
  }
  if (!f.includeVersionless) q = q.where('packages.version', 'is not', null);
  q = f.status !== undefined ? q.where('packages.status', '=', f.status) : q.where('packages.status', 'in', f.displayable);
  switch (orderBy) {
    case 'name': q = q.orderBy('packages.name', sort); break;
    case 'version': q = q.orderBy('packages.version', sort); break;
    case 'type': q = q.orderBy('packages.package_type', sort); break;
    case 'project_path':
      // Packages::Package.order_project_path: by the project's path.
      q = q.innerJoin('projects', 'projects.id', 'packages.project_id').orderBy('projects.path', sort);
      break;
    default: q = q.orderBy('packages.created_at', sort);
  }
  return q.orderBy('packages.id', sort);
}

/** A package of the project, among the given statuses (Packages::PackageFinder). */
export function findProjectPackage(db: Db, projectId: number, id: number, statuses: number[]): Promise<PackageRow | undefined> {
  return db.selectFrom('packages').selectAll().where('project_id', '=', projectId).where('id', '=', id)
    .where('status', 'in', statuses).executeTakeFirst();
}

export function findPackageByNameVersion(
  db: Db, projectId: number, type: string, name: string, version: string,
): Promise<PackageRow | undefined> {
  return db.selectFrom('packages').selectAll().where('project_id', '=', projectId).where('package_type', '=', type)
    .where('name', '=', name).where('version', '=', version).executeTakeFirst();
}

export interface NewPackage {
  project_id: number;
  name: string;
  version: string;
  package_type: string;
  status: number;
  creator_id: number | null;
  pipeline_id: number | null;
  created_at: string;
  updated_at: string;
}

/**
 * The package of that name and version, made when missing (safe_find_or_create_by!): the unique
 * index decides between two uploads racing to make it, and the loser reads the winner's row.
 */
export async function findOrInsertPackage(trx: Db, p: NewPackage): Promise<{ row: PackageRow; created: boolean }> {
  const inserted = await trx.insertInto('packages').values(p)
    .onConflict((oc) => oc.columns(['project_id', 'package_type', 'name', 'version']).doNothing())
    .returningAll().executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const row = await findPackageByNameVersion(trx, p.project_id, p.package_type, p.name, p.version);
  if (!row) throw new Error('package vanished while uploading into it');
  return { row, created: false };
}

export async function updatePackage(trx: Db, id: number, values: { status?: number; updated_at: string }): Promise<void> {
  await trx.updateTable('packages').set(values).where('id', '=', id).execute();
}

export async function deletePackageRow(trx: Db, id: number): Promise<void> {
  await trx.deleteFrom('packages').where('id', '=', id).execute();
}

/** Other versions of a package's name and type in its project (Packages::Package#versions). */
export function otherVersions(db: Db, pkg: PackageRow): Promise<PackageRow[]> {
  return db.selectFrom('packages').selectAll().where('project_id', '=', pkg.project_id).where('name', '=', pkg.name)
    .where('package_type', '=', pkg.package_type).where('id', '!=', pkg.id)
    .where((eb) => (pkg.version === null
      ? eb('version', 'is not', null)
      : eb.or([eb('version', '!=', pkg.version), eb('version', 'is', null)])))
    .orderBy('version').orderBy('id').execute();
}

/** A package file row before the database gives it an id. */
export type NewPackageFile = Omit<PackageFileRow, 'id'>;

export function insertPackageFile(trx: Db, f: NewPackageFile): Promise<PackageFileRow> {
  return trx.insertInto('package_files').values(f).returningAll().executeTakeFirstOrThrow();
}

export function packageFilesQuery(db: Db, packageId: number) {
  return db.selectFrom('package_files').selectAll().where('package_id', '=', packageId).orderBy('id');
}

export function allPackageFiles(db: Db, packageId: number): Promise<PackageFileRow[]> {
  return packageFilesQuery(db, packageId).execute();
}

export function packageFileIsNamed(db: Db, packageId: number, fileName: string): Promise<{ id: number } | undefined> {
  return db.selectFrom('package_files').select('id').where('package_id', '=', packageId).where('file_name', '=', fileName)
    .executeTakeFirst();
}

/** The newest file of that name in the package (Packages::PackageFileFinder: the most recent wins). */
export function latestPackageFile(db: Db, packageId: number, fileName: string): Promise<PackageFileRow | undefined> {
  return db.selectFrom('package_files').selectAll().where('package_id', '=', packageId).where('file_name', '=', fileName)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export function findPackageFile(db: Db, packageId: number, id: number): Promise<PackageFileRow | undefined> {
  return db.selectFrom('package_files').selectAll().where('package_id', '=', packageId).where('id', '=', id).executeTakeFirst();
}

export async function deletePackageFileRow(trx: Db, id: number): Promise<void> {
  await trx.deleteFrom('package_files').where('id', '=', id).execute();
}

export async function countPackageFiles(trx: Db, packageId: number): Promise<number> {
  const row = await trx.selectFrom('package_files').select((eb) => eb.fn.countAll<number>().as('n')).where('package_id', '=', packageId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Paths of projects, for the group list's project_path. */
export function projectPaths(db: Db, ids: number[]): Promise<{ id: number; path: string; namespace_id: number }[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('projects').select(['id', 'path', 'namespace_id']).where('id', 'in', ids).execute();
}

/** The pipelines packages name (Package::Pipeline: PipelineBasic and its user). */
export function pipelinesByIds(db: Db, ids: number[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('ci_pipelines').selectAll().where('id', 'in', ids).execute();
}

/**
 * The pipelines that uploaded into each package (the Service's build infos): the package's first
 * and those of its files, newest first.
 */
export async function packagePipelineIds(db: Db, packages: { id: number; pipeline_id: number | null }[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (packages.length === 0) return out;
  const rows = await db.selectFrom('package_files').select(['package_id', 'pipeline_id']).distinct()
    .where('package_id', 'in', packages.map((p) => p.id)).where('pipeline_id', 'is not', null).execute();
  for (const p of packages) out.set(p.id, p.pipeline_id === null ? [] : [p.pipeline_id]);
  for (const r of rows) {
    const list = out.get(r.package_id)!;
    if (!list.includes(r.pipeline_id!)) list.push(r.pipeline_id!);
  }
  for (const list of out.values()) list.sort((a, b) => b - a);
  return out;
}
