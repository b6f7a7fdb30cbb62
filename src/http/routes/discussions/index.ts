/**
 * What every noteable shares (issues, snippets, commits; merge requests next): notes, discussions
 * and award emoji.
 *
 * Every path of the area and its guard: `npm run routes -- discussions`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';

export default async function discussionsArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'discussions', {
  });
}
