/**
 * Bulk repository storage moves of projects, groups and snippets (spec, Repository storage moves).
 *
 * Every path of the area and its guard: `npm run routes -- storage`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import storageMoves from './storage-moves.ts';
import projectStorage from './project-storage.ts';

export default async function storageArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'storage', {
    'storage-moves': storageMoves,     // /(project|group|snippet)_repository_storage_moves,
                                       // /(projects|groups|snippets)/:id/repository_storage_moves
    'project-storage': projectStorage, // /projects/:id/storage
  });
}
