/**
 * The generic package registry's naming rules (Gitlab::Regex::Packages, 15.2):
 * generic_package_name_regex and generic_package_file_name_regex are maven_file_name_regex
 * (`[A-Za-z0-9._+-]+`), generic_package_version_regex is maven_version_regex
 * (`(\.?[\w+-]+\.?)+`: word characters, `+` and `-` in runs joined by one or two dots, with at most
 * one dot at either end). The version pattern is rewritten so that no input backtracks.
 */

const NAME = /^[A-Za-z0-9._+-]+$/;
const VERSION = /^\.?[A-Za-z0-9_+-]+(?:\.{1,2}[A-Za-z0-9_+-]+)*\.?$/;

/** Bounds kiln puts on each before it reaches the database (the Service's columns are 255). */
export const MAX_NAME_LENGTH = 255;

export function validGenericPackageName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && NAME.test(name);
}

export function validGenericPackageVersion(version: string): boolean {
  return version.length <= MAX_NAME_LENGTH && VERSION.test(version);
}

/** The name of a file in a package: the package name's rule (generic_package_file_name_regex). */
export function validGenericPackageFileName(fileName: string): boolean {
  return validGenericPackageName(fileName);
}

/**
 * The `file_path: true` validator of the package name and file name (Gitlab::PathTraversal): a
 * name the rule allows may still be `..`, which the Service refuses as "should be a valid file path".
 */
export function isTraversal(name: string): boolean {
  return name === '..';
}

/** Packages::Package statuses. */
export const PACKAGE_STATUSES = ['default', 'hidden', 'processing', 'error', 'pending_destruction'] as const;
export type PackageStatus = typeof PACKAGE_STATUSES[number];

export function statusName(value: number): PackageStatus {
  return PACKAGE_STATUSES[value] ?? 'default';
}

export function statusValue(name: PackageStatus): number {
  return PACKAGE_STATUSES.indexOf(name);
}

/** Packages::Package::DISPLAYABLE_STATUSES: what lists show unless asked for a status. */
export const DISPLAYABLE_STATUSES = [statusValue('default'), statusValue('error')];
/** Packages::Package::INSTALLABLE_STATUSES: what may be downloaded. */
export const INSTALLABLE_STATUSES = [statusValue('default'), statusValue('hidden')];

/** Packages::Package package_types of 15.2 (the lists filter by any of them). */
export const PACKAGE_TYPES = [
  'maven', 'npm', 'conan', 'nuget', 'pypi', 'composer', 'generic', 'golang', 'debian', 'rubygems', 'helm', 'terraform_module', 'rpm',
] as const;
