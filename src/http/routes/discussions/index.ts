/**
 * What every noteable shares (issues, snippets, commits; merge requests next): notes, discussions
 * and award emoji.
 *
 * Every path of the area and its guard: `npm run routes -- discussions`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import notes from './notes.ts';
import discussions from './discussions.ts';
import awardEmoji from './award-emoji.ts';

export default async function discussionsArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'discussions', {
    'notes': notes,                    // /projects/:id/{issues,snippets}/:noteable_id/notes[/:note_id]
    'discussions': discussions,        // /projects/:id/{issues,snippets,repository/commits}/:noteable_id/discussions[…]
    'award-emoji': awardEmoji,         // /projects/:id/{issues/:issue_iid,snippets/:snippet_id}[/notes/:note_id]/award_emoji[/:award_id]
  });
}
