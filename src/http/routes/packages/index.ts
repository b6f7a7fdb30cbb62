/**
 * The package registry: generic packages, project and group package lists, packages and their
 * files (the Service's Packages API, 15.2).
 *
 * Every path of the area and its guard: `npm run routes -- packages`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import genericPackages from './generic-packages.ts';
import packages from './packages.ts';

export default async function packagesArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'packages', {
    'generic-packages': genericPackages, // /projects/:id/packages/generic/:package_name/:package_version/:file_name
    // /projects/:id/packages[/:package_id[/package_files[/:package_file_id]]], /groups/:id/packages
    'packages': packages,
  });
}
