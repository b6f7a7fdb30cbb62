/**
 * User preferences (spec: Users table rows GET/PUT /user/preferences; reference §1.9): the
 * current user's diff preferences. PUT requires both flags, as the spec's table says (the
 * Service's code accepts either alone; the spec is explicit, so it wins: DESIGN, Fidelity).
 */
import type { FastifyPluginAsync } from 'fastify';
import { findOrCreatePreferences, updatePreferences } from '../../../domain/user-preferences/user-preferences.queries.ts';
import { ApiError } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { presentUserPreferences, UserPreferencesSchema } from '../../entities/user-preferences.ts';

const updateParams = defineParams({
  view_diffs_file_by_file: P.boolean({ description: 'show one file diff per page' }),
  show_whitespace_in_diffs: P.boolean({ description: 'show whitespace changes in diffs' }),
});

const userPreferences: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  app.get('/user/preferences', {
    config: { auth: 'required', scopes: ['read_user'] },
    schema: { summary: "The current user's preferences", tags: ['users'], response: { 200: UserPreferencesSchema } },
  }, async (request) => presentUserPreferences(await findOrCreatePreferences(db, request.caller!.user.id)));

  app.put('/user/preferences', {
    config: { auth: 'required', params: updateParams },
    schema: { summary: "Change the current user's preferences", tags: ['users'], response: { 200: UserPreferencesSchema } },
  }, async (request) => {
    const input = request.input as { view_diffs_file_by_file: boolean | null; show_whitespace_in_diffs: boolean | null };
    // A flag sent empty is given without a value, which the preference cannot hold: the Service's
    // update service fails and the endpoint answers with its literal text (reference §1.9).
    if (input.view_diffs_file_by_file === null || input.show_whitespace_in_diffs === null) {
      throw new ApiError(400, { message: '400 Bad Request' });
    }
    const row = await updatePreferences(db, request.caller!.user.id, {
      view_diffs_file_by_file: input.view_diffs_file_by_file,
      show_whitespace_in_diffs: input.show_whitespace_in_diffs,
    });
    return presentUserPreferences(row);
  });
};

export default userPreferences;
