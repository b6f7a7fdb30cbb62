/** The package registry (migration 2026-11-29T0200_packages). */
import type { Generated, Selectable } from 'kysely';

export interface PackagesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  version: string | null;
  /** Packages::Package package_types; kiln stores `generic` ones. */
  package_type: string;
  /** 0 default, 1 hidden, 2 processing, 3 error, 4 pending_destruction. */
  status: Generated<number>;
  creator_id: number | null;
  pipeline_id: number | null;
  created_at: string;
  updated_at: string;
}
export type PackageRow = Selectable<PackagesTable>;

export interface PackageFilesTable {
  id: Generated<number>;
  package_id: number;
  project_id: number;
  file_name: string;
  size: number;
  /** Relative to the data directory. */
  file_path: string;
  file_md5: string | null;
  file_sha1: string | null;
  file_sha256: string | null;
  pipeline_id: number | null;
  created_at: string;
  updated_at: string;
}
export type PackageFileRow = Selectable<PackageFilesTable>;

declare module '../types.ts' {
  interface DB {
    packages: PackagesTable;
    package_files: PackageFilesTable;
  }
}
